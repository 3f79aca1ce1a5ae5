package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.LAG_BOUND_NO_TEST_REACHES;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.causeOfType;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.RedisServer;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A standalone Redis that hangs with its sockets open (its process stopped with SIGSTOP, as a
 * paused VM or a partition would leave it): the marker's commands time out, mutations of actors
 * are refused and their reads go to the primary while it hangs, the connection that hung is
 * closed for a new one, and once Redis answers again (SIGCONT) mutations work again, without a
 * restart of the application.
 */
@ExtendWith(RoutingLeakCheck.class)
class RedisThatHangsIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(1);

    private static final String ACTOR = "hang-actor";

    static PostgresCluster cluster;
    private RedisServer redis;

    @BeforeAll
    static void schema() throws SQLException {
        cluster = DB.cluster();
        createSchema(cluster);
    }

    @BeforeEach
    void startRedis() {
        redis = RedisServer.start();
    }

    @AfterEach
    void stopRedis() {
        redis.close();
    }

    @Test
    void redisThatHangs_refusesMutationsWhileItHangs_isLeftForANewConnection_andMutationsWorkOnceItAnswers()
            throws Exception {
        final Map<String, Object> settings = new HashMap<>(RoutingTestSupport.redisWithShortWindow(redis.uri(), "5s"));
        settings.put(RoutingSettings.MAX_REPLICA_LAG, LAG_BOUND_NO_TEST_REACHES);
        try (EntityManagerFactory factory = emf(cluster, settings)) {
            final long id = writeNoteAs(factory, ACTOR, "before it hangs");
            final Set<String> before = libraryConnections();
            assertThat(before).as("the library's connection to Redis").isNotEmpty();

            redis.pause();
            final long notes = countOnPrimary(cluster, "note");
            for (int i = 0; i < 3; i++) {
                final int attempt = i;
                assertThatThrownBy(() -> writeNoteAs(factory, ACTOR, "while it hangs"))
                        .satisfies(e -> assertThat(causeOfType(e, ConsistencyMarkerException.class))
                                .as("mutation #%d refused by the marker: %s", attempt, e)
                                .isNotNull());
            }
            assertThat(countOnPrimary(cluster, "note"))
                    .as("nothing was written")
                    .isEqualTo(notes);
            assertThat(readNoteAs(factory, ACTOR, id))
                    .as("no marker to read: the primary")
                    .isEqualTo(cluster.primary());

            redis.resume();
            final long later = awaitWrite(factory, ACTOR, "once it answers again");
            assertThat(readNoteAs(factory, ACTOR, later))
                    .as("read-your-writes after the outage")
                    .isNotNull();
            // A connection whose command timed out counts as failed: the library closed it and made a new one.
            // Polled: Redis notices the close when it reads the socket again.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Collections.disjoint(libraryConnections(), before)) {
                assertThat(System.nanoTime())
                        .as(
                                "the library leaves the connection that hung (%s) within 30 s; Redis lists %s",
                                before, libraryConnections())
                        .isLessThan(deadline);
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // the poll interval
            }
        }
    }

    /**
     * The ids of the clients connected to Redis other than the one asking ({@code CLIENT LIST} runs as
     * {@code cmd=client}): the library's.
     */
    private Set<String> libraryConnections() {
        final String clients = redis.query("CLIENT LIST");
        assertThat(clients).as("CLIENT LIST").isNotNull();
        return clients.lines()
                .filter(line -> !line.contains(" cmd=client"))
                .map(line -> line.substring(0, line.indexOf(' ')))
                .collect(Collectors.toSet());
    }

    /** Writes a note in a scope of {@code actor}, polling while the marker refuses it (bounded). */
    static long awaitWrite(EntityManagerFactory factory, String actor, String text) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                return writeNoteAs(factory, actor, text);
            } catch (RuntimeException e) {
                assertThat(causeOfType(e, ConsistencyMarkerException.class))
                        .as("only the marker refuses: %s", e)
                        .isNotNull();
                assertThat(System.nanoTime())
                        .as("mutations work again within 30 s of Redis answering: %s", e)
                        .isLessThan(deadline);
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // the poll interval
            }
        }
    }

    private static long writeNoteAs(EntityManagerFactory factory, String actor, String text) {
        try (RoutingScope ignored = RoutingScope.builder().actor(actor).open();
                EntityManager em = factory.createEntityManager()) {
            em.getTransaction().begin();
            final Note note = new Note(text);
            em.persist(note);
            em.getTransaction().commit();
            return note.id;
        }
    }

    /** Reads the note in a new scope of {@code actor}; returns the node that served it, failing if the note is missing. */
    private static Node readNoteAs(EntityManagerFactory factory, String actor, long id) {
        try (RoutingScope ignored = RoutingScope.builder().actor(actor).open();
                EntityManager em = factory.createEntityManager()) {
            final Note note = em.find(Note.class, id);
            final Node node = servedBy(cluster, em);
            assertThat(note)
                    .as("%s's read served by %s must see the write (%s)", actor, node, routingState(factory))
                    .isNotNull();
            return node;
        }
    }
}
