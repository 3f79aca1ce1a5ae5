package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.awaitCaughtUpAsSeenBy;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Several replicas, their lag and their failures: a session keeps one replica while new sessions
 * are balanced over both; a replica beyond the lag bound gets no reads; a stopped replica is skipped
 * under {@code FALLBACK} (the primary serves when none is left) and used again once started, and
 * surfaces under {@code FAIL}; and a unit of work whose read fell back to the primary never reads a
 * replica that is behind what the primary returned (monotonic reads).
 */
@ExtendWith(RoutingLeakCheck.class)
class ReplicasLagAndFailuresIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    @Test
    void session_keepsOneReplica_soItsReadsNeverGoBackInTime() {
        try (EntityManager em = emf.createEntityManager()) {
            final Set<Node> nodes = new HashSet<>();
            for (int i = 0; i < 10; i++) {
                nodes.add(servedBy(cluster, em));
                em.getTransaction().begin();
                nodes.add(servedBy(cluster, em));
                em.getTransaction().commit();
            }
            assertThat(nodes).as("one node (%s)", routingState(emf)).hasSize(1);
            assertThat(nodes.iterator().next().isPrimary())
                    .as("a replica (%s)", routingState(emf))
                    .isFalse();
        }
        assertThat(servedByFreshSessions(emf, 6))
                .as("new sessions are balanced over both replicas (%s)", routingState(emf))
                .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
    }

    @Test
    void replicaBeyondLagBound_getsNoReads() throws SQLException {
        final EntityManagerFactory bounded = emf(cluster, Map.of(RoutingSettings.MAX_REPLICA_LAG_BYTES, "64kB"));
        try (bounded) {
            final Node paused = cluster.standby(1);
            cluster.pauseReplay(paused);
            onPrimary(
                    cluster,
                    "insert into note select nextval('note_seq'), repeat('x', 1000) from generate_series(1, 2000)");
            cluster.awaitReplay(cluster.standby(2), cluster.currentWalLsn(), Duration.ofSeconds(30));
            runtime(bounded).checkReplicasNow();
            assertThat(runtime(bounded).replicas().get(0).lagBytes()).isGreaterThan(64 * 1024);
            assertThat(servedByFreshSessions(bounded, 10))
                    .as("only standby 2 is within the bound (%s)", routingState(bounded))
                    .containsExactly(cluster.standby(2));
        }
    }

    @Test
    void stoppedReplica_isSkipped_underFallback_andUsedAgainAfterRestart() {
        final EntityManagerFactory own = emf(cluster, Map.of());
        try (own) {
            cluster.stop(cluster.standby(1));
            runtime(own).checkReplicasNow();
            assertThat(servedByFreshSessions(own, 10))
                    .as("standby 1 is stopped (%s)", routingState(own))
                    .containsExactly(cluster.standby(2));

            cluster.stop(cluster.standby(2));
            runtime(own).checkReplicasNow();
            assertThat(servedByFreshSessions(own, 3))
                    .as("no replica left: the primary (%s)", routingState(own))
                    .containsExactly(cluster.primary());

            cluster.start(cluster.standby(1));
            cluster.start(cluster.standby(2));
            // The breaker stays open for its open duration, then the health check's trial closes it; and the
            // check that did may have run before the standby caught up, seeing it behind.
            awaitCaughtUpAsSeenBy(cluster, own);
            assertThat(servedByFreshSessions(own, 6))
                    .as("both standbys are back (%s)", routingState(own))
                    .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
        }
    }

    @Test
    void stoppedReplica_surfacesError_underFail() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.REPLICA_URLS, cluster.standby(1).jdbcUrl());
        settings.put(RoutingSettings.REPLICA_FAILURE, "FAIL");
        final EntityManagerFactory failing = emf(cluster, settings);
        try (failing) {
            cluster.stop(cluster.standby(1));
            runtime(failing).checkReplicasNow();
            try (EntityManager em = failing.createEntityManager()) {
                assertThatThrownBy(() -> servedBy(cluster, em))
                        .hasStackTraceContaining("No replica can serve this read (replica-down)")
                        .hasStackTraceContaining(RoutingSettings.REPLICA_FAILURE + "=FAIL");
            }
        }
    }

    /**
     * Both standbys miss a change the primary has: a read that needs the change falls back to the
     * primary. Returns the note's id; the note reads "new" on the primary and "old" on the standbys.
     */
    private long noteChangedBehindPausedStandbys() throws SQLException {
        final long id = createNote("old");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update note set text = 'new' where id = " + id);
        return id;
    }

    /** Reads the note in a scope whose minimum position no standby has replayed: it falls back to the primary. */
    private static void firstReadFallsBack(EntityManager em, long id) {
        final ConsistencyToken now = ReadYourWrites.currentPosition(emf);
        try (RoutingScope ignored = RoutingScope.builder().minimum(now).open()) {
            assertThat(em.find(Note.class, id).text).isEqualTo("new");
            assertThat(servedBy(cluster, em))
                    .as("the read fell back (%s)", routingState(emf))
                    .isEqualTo(cluster.primary());
        }
        em.clear();
    }

    @Test
    void fallbackToPrimary_sticks_theUnitNeverReadsAReplicaBehindWhatThePrimaryReturned() throws SQLException {
        final long id = noteChangedBehindPausedStandbys();
        try (EntityManager em = emf.createEntityManager()) {
            firstReadFallsBack(em, id);

            // The next statement, outside the scope: it has no minimum of its own.
            assertThat(em.find(Note.class, id).text)
                    .as("next statement of the unit")
                    .isEqualTo("new");
            assertThat(servedBy(cluster, em)).isEqualTo(cluster.primary());
            em.clear();

            em.getTransaction().begin();
            assertThat(em.find(Note.class, id).text)
                    .as("next transaction of the unit")
                    .isEqualTo("new");
            assertThat(servedBy(cluster, em)).isEqualTo(cluster.primary());
            em.getTransaction().commit();
            em.clear();

            // Once a standby has replayed past what the primary returned, the unit may read there, and
            // only there: the other one is still behind.
            cluster.resumeReplay(cluster.standby(2));
            cluster.awaitReplay(cluster.standby(2), cluster.currentWalLsn(), Duration.ofSeconds(30));
            runtime(emf).checkReplicasNow();
            // The unit's floor is the primary's position when it next reads, which WAL the server writes on its
            // own (a standby snapshot, autovacuum) can have moved past what the library knows standby 2 replayed:
            // that read stays on the primary, until the library knows standby 2 is past the floor.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            int attempts = 0;
            while (true) {
                attempts++;
                em.getTransaction().begin();
                assertThat(em.find(Note.class, id).text).isEqualTo("new");
                final Node node = servedBy(cluster, em);
                em.getTransaction().commit();
                em.clear();
                assertThat(node)
                        .as("standby 1 is behind what the primary returned (%s)", routingState(emf))
                        .isNotEqualTo(cluster.standby(1));
                if (node.equals(cluster.standby(2))) {
                    break;
                }
                assertThat(System.nanoTime())
                        .as("the unit reads on standby 2 within 30 s (%d attempts; %s)", attempts, routingState(emf))
                        .isLessThan(deadline);
                cluster.awaitReplay(cluster.standby(2), cluster.currentWalLsn(), Duration.ofSeconds(30));
                runtime(emf).checkReplicasNow();
            }
            System.out.printf("the unit read on standby 2 at attempt %d%n", attempts);
            for (int i = 0; i < 4; i++) {
                em.getTransaction().begin();
                assertThat(em.find(Note.class, id).text).isEqualTo("new");
                assertThat(servedBy(cluster, em))
                        .as("read #%d after the unit moved to standby 2 (%s)", i, routingState(emf))
                        .isEqualTo(cluster.standby(2));
                em.getTransaction().commit();
                em.clear();
            }
        }
    }

    @Test
    void fallbackToPrimary_sticks_evenForStaleReads() throws SQLException {
        final long id = noteChangedBehindPausedStandbys();
        try (EntityManager em = emf.createEntityManager()) {
            firstReadFallsBack(em, id);
            em.setProperty(RoutingSettings.STRATEGY, Strategy.STALE_READ.name());
            em.getTransaction().begin();
            assertThat(em.find(Note.class, id).text)
                    .as("a STALE_READ read after the fallback")
                    .isEqualTo("new");
            assertThat(servedBy(cluster, em))
                    .as("the unit stays on the primary (%s)", routingState(emf))
                    .isEqualTo(cluster.primary());
            em.getTransaction().commit();
        }
    }
}
