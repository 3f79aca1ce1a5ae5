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
import io.github.hibernaterouting.testkit.RedisSentinelGroup;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The marker behind Redis Sentinel ({@code redis-sentinel://}), through a real failover: a master,
 * one replica and a Sentinel from the test kit, a real primary and one standby whose replay is
 * paused, so that a read served by it would miss the write. The replica loses the actor's marker
 * before it is promoted (a write made on it locally, never propagated): the library must notice
 * the new Redis process and keep the actor on the primary, refuse mutations only while no master
 * answers, and work again once one does. Two instances: A writes, B reads, so that B knows the
 * actor's write from Redis only.
 */
@ExtendWith(RoutingLeakCheck.class)
class SentinelFailoverIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(1);

    private static final String ACTOR = "failover-actor";
    private static final String MARKER = "hibernate-routing:replication:" + ACTOR;

    static PostgresCluster cluster;
    private RedisSentinelGroup redis;

    @BeforeAll
    static void schema() throws SQLException {
        cluster = DB.cluster();
        createSchema(cluster);
    }

    @BeforeEach
    void startRedis() {
        redis = RedisSentinelGroup.start();
    }

    @AfterEach
    void stopRedis() {
        cluster.resumeReplay(cluster.standby(1));
        redis.close();
    }

    @Test
    void failoverThatLostTheMarker_keepsTheActorOnThePrimary_andRefusesMutationsOnlyWhileNoMasterAnswers()
            throws Exception {
        final Map<String, Object> settings = new HashMap<>(RoutingTestSupport.redisWithShortWindow(redis.uri(), "5s"));
        // The paused standby stays eligible however long this takes: only the marker keeps the actor off it.
        settings.put(RoutingSettings.MAX_REPLICA_LAG, LAG_BOUND_NO_TEST_REACHES);
        final EntityManagerFactory instanceA = emf(cluster, settings);
        final EntityManagerFactory instanceB = emf(cluster, settings);
        try (instanceA;
                instanceB) {
            // A Redis seen for the first time may have lost markers: one window on the primary first.
            awaitActorReadsOnTheStandby(instanceB, "someone-else");
            final Node standby = cluster.standby(1);
            cluster.pauseReplay(standby);
            final long id = writeNoteAs(instanceA, ACTOR, "before the failover");
            assertThat(readNoteAs(instanceB, ACTOR, id))
                    .as("the marker keeps B's read of the actor off the paused standby")
                    .isEqualTo(cluster.primary());

            // The replica loses the marker: a local write on it, which its master never sees.
            awaitReplicated(MARKER);
            assertThat(redis.replica().query("CONFIG SET replica-read-only no")).isEqualTo("+OK");
            assertThat(redis.replica().query("DEL " + MARKER)).isEqualTo(":1");
            final String oldRunId = field(redis.master().query("INFO server"), "run_id");

            redis.master().kill();
            assertThat(redis.masterPort())
                    .as("the Sentinel still names the dead master")
                    .isEqualTo(redis.master().port());
            final long before = countOnPrimary(cluster, "note");
            assertThatThrownBy(() -> writeNoteAs(instanceA, ACTOR, "while no master answers"))
                    .satisfies(e -> assertThat(causeOfType(e, ConsistencyMarkerException.class))
                            .as("refused by the marker: %s", e)
                            .isNotNull());
            assertThat(countOnPrimary(cluster, "note"))
                    .as("nothing was written")
                    .isEqualTo(before);
            assertThat(readNoteAs(instanceB, ACTOR, id))
                    .as("no marker to read: the primary")
                    .isEqualTo(cluster.primary());
            assertThat(redis.masterPort())
                    .as("no failover yet: the refusal came while no master answered")
                    .isEqualTo(redis.master().port());

            redis.allowFailover();
            redis.awaitPromoted();
            final String newRunId = field(redis.replica().query("INFO server"), "run_id");
            assertThat(newRunId).isNotEqualTo(oldRunId);
            assertThat(redis.replica().query("EXISTS " + MARKER))
                    .as("the new master lacks the marker")
                    .isEqualTo(":0");
            // B reconnects to the new master (at most once per timeout): until its read went through it,
            // and after, every read of the actor is served by the primary and sees the write.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!newRunId.equals(field(redis.replica().query("HGETALL hibernate-routing:alive"), "run_id"))) {
                assertThat(readNoteAs(instanceB, ACTOR, id))
                        .as("the actor's read after the failover (%s)", routingState(instanceB))
                        .isEqualTo(cluster.primary());
                assertThat(System.nanoTime())
                        .as("B reads the marker from the new master within 30 s")
                        .isLessThan(deadline);
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos()); // the poll interval
            }
            for (int i = 0; i < 4; i++) {
                assertThat(readNoteAs(instanceB, ACTOR, id))
                        .as(
                                "read #%d: the new Redis process may have lost markers, so the primary (%s)",
                                i, routingState(instanceB))
                        .isEqualTo(cluster.primary());
            }

            final long later = awaitWrite(instanceA, ACTOR, "after the failover");
            assertThat(redis.replica().query("HGETALL " + MARKER))
                    .as("the new master holds the actor's marker")
                    .contains("lsn");
            assertThat(readNoteAs(instanceB, ACTOR, later)).isEqualTo(cluster.primary());
        }
    }

    @Test
    void masterThatHangs_isLeftForThePromotedReplica_andMutationsWorkAgainWithReadYourWrites() throws Exception {
        final Map<String, Object> settings = new HashMap<>(RoutingTestSupport.redisWithShortWindow(redis.uri(), "5s"));
        settings.put(RoutingSettings.MAX_REPLICA_LAG, LAG_BOUND_NO_TEST_REACHES);
        final EntityManagerFactory instanceA = emf(cluster, settings);
        final EntityManagerFactory instanceB = emf(cluster, settings);
        try (instanceA;
                instanceB) {
            awaitActorReadsOnTheStandby(instanceB, "someone-else");
            final Node standby = cluster.standby(1);
            cluster.pauseReplay(standby);
            final long id = writeNoteAs(instanceA, ACTOR, "before the master hangs");
            assertThat(readNoteAs(instanceB, ACTOR, id)).isEqualTo(cluster.primary());
            awaitReplicated(MARKER);

            // The master hangs with its sockets open, as a paused process or a partition leaves it: the
            // usual reason a Sentinel fails over. It never answers again in this test.
            redis.master().pause();
            final long before = countOnPrimary(cluster, "note");
            assertThatThrownBy(() -> writeNoteAs(instanceA, ACTOR, "while the master hangs"))
                    .satisfies(e -> assertThat(causeOfType(e, ConsistencyMarkerException.class))
                            .as("refused by the marker: %s", e)
                            .isNotNull());
            assertThat(countOnPrimary(cluster, "note"))
                    .as("nothing was written")
                    .isEqualTo(before);
            assertThat(readNoteAs(instanceB, ACTOR, id))
                    .as("no marker to read: the primary")
                    .isEqualTo(cluster.primary());

            redis.allowFailover();
            redis.awaitPromoted();
            final String newRunId = field(redis.replica().query("INFO server"), "run_id");
            awaitNewMasterReadBy(instanceB, id, newRunId);
            final long later = awaitWrite(instanceA, ACTOR, "after the failover");
            assertThat(redis.replica().query("HGETALL " + MARKER))
                    .as("the promoted replica holds the actor's marker")
                    .contains("lsn");
            assertThat(readNoteAs(instanceB, ACTOR, later))
                    .as("B's read of the actor's write after the failover, the standby still paused")
                    .isEqualTo(cluster.primary());
        }
    }

    /**
     * Until B's reads go through the new master, and for the window after (a new Redis process may
     * have lost markers), every read of the actor is served by the primary and sees the write.
     */
    private void awaitNewMasterReadBy(EntityManagerFactory instanceB, long id, String newRunId) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!newRunId.equals(field(redis.replica().query("HGETALL hibernate-routing:alive"), "run_id"))) {
            assertThat(readNoteAs(instanceB, ACTOR, id))
                    .as("the actor's read after the failover (%s)", routingState(instanceB))
                    .isEqualTo(cluster.primary());
            assertThat(System.nanoTime())
                    .as("B reads the marker from the new master within 30 s")
                    .isLessThan(deadline);
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos()); // the poll interval
        }
        for (int i = 0; i < 4; i++) {
            assertThat(readNoteAs(instanceB, ACTOR, id))
                    .as(
                            "read #%d: the new Redis process may have lost markers, so the primary (%s)",
                            i, routingState(instanceB))
                    .isEqualTo(cluster.primary());
        }
    }

    /** Writes a note in a scope of {@code actor}, polling while the marker refuses it (bounded). */
    private static long awaitWrite(EntityManagerFactory factory, String actor, String text) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                return writeNoteAs(factory, actor, text);
            } catch (RuntimeException e) {
                assertThat(causeOfType(e, ConsistencyMarkerException.class))
                        .as("only the marker refuses: %s", e)
                        .isNotNull();
                assertThat(System.nanoTime())
                        .as("mutations work again within 30 s of the promotion: %s", e)
                        .isLessThan(deadline);
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // the poll interval
            }
        }
    }

    private void awaitReplicated(String key) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!":1".equals(redis.replica().query("EXISTS " + key))) {
            assertThat(System.nanoTime())
                    .as("the replica has %s within 30 s", key)
                    .isLessThan(deadline);
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos()); // the poll interval
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

    private static void awaitActorReadsOnTheStandby(EntityManagerFactory factory, String actor) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try (RoutingScope ignored = RoutingScope.builder().actor(actor).open();
                    EntityManager em = factory.createEntityManager()) {
                if (servedBy(cluster, em).equals(cluster.standby(1))) {
                    return;
                }
            }
            assertThat(System.nanoTime())
                    .as(
                            "%s reads from the standby once the window is over, within 30 s (%s)",
                            actor, routingState(factory))
                    .isLessThan(deadline);
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos()); // the poll interval
        }
    }

    /** A field of an INFO reply ({@code name:value} lines) or of a hash read with HGETALL (name and value on lines of their own). */
    private static String field(String reply, String name) {
        if (reply == null) {
            return null;
        }
        final String[] lines = reply.split("\r?\n");
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].startsWith(name + ":")) {
                return lines[i].substring(name.length() + 1).trim();
            }
            if (lines[i].equals(name) && i + 1 < lines.length) {
                return lines[i + 1];
            }
        }
        return null;
    }
}
