package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.LAG_BOUND_NO_TEST_REACHES;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.awaitCaughtUpAsSeenBy;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * More actors write within the stamps' time to live than this instance's memory holds
 * ({@code actor_stamps.memory_capacity}), on a real primary and streaming standbys whose replay is
 * paused: every actor must still read its own write.
 */
@ExtendWith(RoutingLeakCheck.class)
class ActorStampsCapacityIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    private static final int CAPACITY = 100;
    private static final int ACTORS = 3 * CAPACITY;

    static PostgresCluster cluster;
    static SimpleMeterRegistry meters = new SimpleMeterRegistry();
    static EntityManagerFactory emf;

    @BeforeAll
    static void start() throws SQLException {
        cluster = DB.cluster();
        createSchema(cluster);
        emf = emf(
                cluster,
                Map.of(
                        // The paused standbys must stay eligible, so that only the stamps keep actors off them.
                        RoutingSettings.MAX_REPLICA_LAG,
                        LAG_BOUND_NO_TEST_REACHES,
                        // No stamp may expire during the test, however slow the machine: only capacity drops them.
                        RoutingSettings.ACTOR_STAMPS_MEMORY_TTL,
                        "1h",
                        RoutingSettings.ACTOR_STAMPS_MEMORY_CAPACITY,
                        String.valueOf(CAPACITY),
                        RoutingSettings.METER_REGISTRY,
                        meters));
    }

    @AfterAll
    static void stop() {
        if (emf != null) {
            emf.close();
        }
        if (cluster != null) {
            cluster.standbys().forEach(cluster::resumeReplay);
        }
    }

    private static long writeNoteAs(String actor) {
        try (RoutingScope ignored = RoutingScope.builder().actor(actor).open();
                EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Note note = new Note(actor + "'s note");
            em.persist(note);
            em.getTransaction().commit();
            return note.id;
        }
    }

    @Test
    void moreWritersThanTheMemoryHolds_eachStillReadsItsOwnWrite_whileTheStandbysLackIt() {
        awaitCaughtUpAsSeenBy(cluster, emf);
        cluster.standbys().forEach(cluster::pauseReplay);
        final long[] notes = new long[ACTORS];
        for (int i = 0; i < ACTORS; i++) {
            notes[i] = writeNoteAs("writer-" + i);
        }
        final List<String> missed = new ArrayList<>();
        for (int i = 0; i < ACTORS; i++) {
            final String actor = "writer-" + i;
            try (RoutingScope ignored = RoutingScope.builder().actor(actor).open();
                    EntityManager em = emf.createEntityManager()) {
                final Note note = em.find(Note.class, notes[i]);
                final Node node = servedBy(cluster, em);
                if (note == null) {
                    missed.add(actor + " on " + node);
                }
            }
        }
        assertThat(missed)
                .as("actors whose read missed their own write (%d of %d; %s)", missed.size(), ACTORS, routingState(emf))
                .isEmpty();
        assertThat(meters.get("hibernate.routing.actor_stamps.dropped")
                        .counter()
                        .count())
                .as("stamps dropped at capacity")
                .isEqualTo(ACTORS - CAPACITY);

        // The dropped stamps keep actors off a standby only until it has replayed them.
        cluster.standbys().forEach(cluster::resumeReplay);
        awaitCaughtUpAsSeenBy(cluster, emf);
        final Set<Node> nodes = new HashSet<>();
        for (int i = 0; i < 10; i++) {
            try (RoutingScope ignored =
                            RoutingScope.builder().actor("never-wrote").open();
                    EntityManager em = emf.createEntityManager()) {
                nodes.add(servedBy(cluster, em));
            }
        }
        assertThat(nodes)
                .as("an actor without a stamp, once the standbys caught up (%s)", routingState(emf))
                .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
    }
}
