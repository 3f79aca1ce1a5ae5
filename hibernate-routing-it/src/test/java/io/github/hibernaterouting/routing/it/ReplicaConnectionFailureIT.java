package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replica that goes down between two health checks: the next unit of work finds that it cannot
 * get a connection, before any statement ran there. The health check is set far apart so that it
 * cannot be what notices.
 */
@ExtendWith(RoutingLeakCheck.class)
class ReplicaConnectionFailureIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(1);

    static PostgresCluster cluster;

    @BeforeAll
    static void schema() throws SQLException {
        cluster = DB.cluster();
        createSchema(cluster);
    }

    private static EntityManagerFactory unitWith(String policy, SimpleMeterRegistry meters) {
        return emf(
                cluster,
                Map.of(
                        RoutingSettings.REPLICA_FAILURE,
                        policy,
                        RoutingSettings.HEALTH_CHECK_INTERVAL,
                        "1h",
                        RoutingSettings.REPLICA_CONNECTION_TIMEOUT,
                        "250ms",
                        RoutingSettings.METER_REGISTRY,
                        meters));
    }

    /** Stops the standby and drops the connections its pool holds, as HikariCP does for dead ones. */
    private static ReplicaNode stopReplicaBehindTheMonitorsBack(EntityManagerFactory emf) {
        final ReplicaNode node = runtime(emf).replicas().get(0);
        assertThat(node.isUp()).isTrue();
        cluster.stop(cluster.standby(1));
        node.ownPool().softEvictConnections();
        return node;
    }

    @Test
    void replicaThatCannotGiveAConnection_isSkipped_underFallback() {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory emf = unitWith("FALLBACK", meters);
        try (emf) {
            final ReplicaNode node = stopReplicaBehindTheMonitorsBack(emf);
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary()).isTrue();
            }
            assertThat(node.isUp()).as("the failure opened the breaker").isFalse();
            assertThat(meters.get(RoutingMetrics.REPLICA_FAILURES)
                            .tag("node", "replica1")
                            .counter()
                            .count())
                    .isEqualTo(1);
            assertThat(meters.get(RoutingMetrics.FALLBACKS)
                            .tag("reason", "replica-down")
                            .counter()
                            .count())
                    .isEqualTo(1);
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary()).isTrue();
            }
            assertThat(meters.get(RoutingMetrics.REPLICA_FAILURES).counter().count())
                    .as("with the breaker open, the replica is not tried again")
                    .isEqualTo(1);
        } finally {
            cluster.start(cluster.standby(1));
        }
    }

    @Test
    void replicaThatCannotGiveAConnection_surfaces_underFail() {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory emf = unitWith("FAIL", meters);
        try (emf) {
            stopReplicaBehindTheMonitorsBack(emf);
            try (EntityManager em = emf.createEntityManager()) {
                assertThatThrownBy(() -> servedBy(cluster, em))
                        .hasStackTraceContaining("Replica replica1")
                        .hasStackTraceContaining("could not give a connection")
                        .hasStackTraceContaining(RoutingSettings.REPLICA_FAILURE + "=FAIL")
                        .hasStackTraceContaining(cluster.standby(1).jdbcUrl());
            }
            assertThat(meters.get(RoutingMetrics.REPLICA_FAILURES).counter().count())
                    .isEqualTo(1);
            assertThat(meters.find(RoutingMetrics.FALLBACKS).counter())
                    .as("no fallback under FAIL")
                    .isNull();
        } finally {
            cluster.start(cluster.standby(1));
        }
    }
}
