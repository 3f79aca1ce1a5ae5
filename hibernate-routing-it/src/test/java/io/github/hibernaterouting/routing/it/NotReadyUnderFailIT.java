package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.LAG_BOUND_NO_TEST_REACHES;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.RedisServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code replica_failure=FAIL} surfaces only a replica that cannot give a connection. "No replica is
 * ready yet" is not a failure: a pending marker whose position no replica has, an unreachable Redis, a position no replica reached
 * within the LSN gate's wait and the lag bound send the read to the primary, as they do under
 * {@code FALLBACK}, and count as fallbacks with their reason.
 */
@ExtendWith(RoutingLeakCheck.class)
class NotReadyUnderFailIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB =
            PostgresClusterExtension.withStandbys(2).withRedis();

    private SimpleMeterRegistry meters;
    private EntityManagerFactory failing;

    @BeforeEach
    void failingUnit() {
        meters = new SimpleMeterRegistry();
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.REPLICA_FAILURE, "FAIL");
        settings.put(RoutingSettings.REDIS_URI, DB.redis().uri());
        settings.put(RoutingSettings.MAX_REPLICA_LAG_BYTES, "64kB");
        // Only the byte bound: paused standbys that lack a position must not also go over a time bound, which
        // counts from the last transaction they replayed (before this unit's bootstrap) on a machine slow enough.
        settings.put(RoutingSettings.MAX_REPLICA_LAG, LAG_BOUND_NO_TEST_REACHES);
        settings.put(RoutingSettings.METER_REGISTRY, meters);
        failing = emf(cluster, settings);
    }

    @AfterEach
    void close() {
        failing.close();
    }

    /** Reads in a scope of {@code actor} (none if {@code null}) with {@code minimum}; returns the node that served it. */
    private Node readAs(String actor, ConsistencyToken minimum) {
        final RoutingScope.Builder scope = RoutingScope.builder().minimum(minimum);
        if (actor != null) {
            scope.actor(actor);
        }
        try (RoutingScope ignored = scope.open();
                EntityManager em = failing.createEntityManager()) {
            return servedBy(cluster, em);
        }
    }

    /** What routing knows, and every fallback reason counted, for the messages. */
    private String state() {
        return routingState(failing) + "; fallbacks "
                + meters.find(RoutingMetrics.FALLBACKS).counters().stream()
                        .map(c -> c.getId().getTag("reason") + "=" + c.count())
                        .toList();
    }

    private double fallbacks(String reason) {
        final Counter counter =
                meters.find(RoutingMetrics.FALLBACKS).tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * A pending marker makes the read take the primary's position now as its minimum; no standby has
     * replayed it, so the primary serves, as a position no replica reached within the wait (or, within
     * the window after the library met this Redis, as for any actor then).
     */
    @Test
    void pendingMarker_whoseWriteNoStandbyHas_readsFromThePrimary() throws SQLException {
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'written by the pending mutation')");
        final String actor = "pending-" + UUID.randomUUID();
        ReadYourWrites.beforeMutation(failing, actor);
        assertThat(readAs(actor, null)).as(state()).isEqualTo(cluster.primary());
        assertThat(fallbacks("lsn-fallback") + fallbacks("pending-write"))
                .as(state())
                .isEqualTo(1);
    }

    @Test
    void redisUnreachable_readsFromThePrimary() {
        final RedisServer redis = DB.redis();
        redis.stop();
        try {
            assertThat(readAs("redis-down", null)).as(state()).isEqualTo(cluster.primary());
            assertThat(fallbacks("pending-write")).as(state()).isEqualTo(1);
        } finally {
            redis.restart();
        }
    }

    @Test
    void positionNoReplicaReachesWithinTheWait_readsFromThePrimary() throws SQLException {
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'behind the standbys')");
        final ConsistencyToken position = ReadYourWrites.currentPosition(failing);
        // No actor: a Redis the library just connected to sends every actor to the primary for a window.
        assertThat(readAs(null, position)).as(state()).isEqualTo(cluster.primary());
        assertThat(fallbacks("lsn-fallback")).as(state()).isEqualTo(1);
    }

    @Test
    void everyReplicaOverTheLagBound_readsFromThePrimary() throws SQLException {
        pauseAllStandbys();
        onPrimary(
                cluster,
                "insert into note select nextval('note_seq'), repeat('x', 1000) from generate_series(1, 2000)");
        runtime(failing).checkReplicasNow();
        try (EntityManager em = failing.createEntityManager()) {
            assertThat(servedBy(cluster, em)).as(state()).isEqualTo(cluster.primary());
        }
        assertThat(fallbacks("lag-bound")).as(state()).isEqualTo(1);
    }
}
