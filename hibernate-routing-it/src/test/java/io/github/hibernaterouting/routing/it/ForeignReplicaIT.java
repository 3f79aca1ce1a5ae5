package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.sql.internal.Masking;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * A replica URL that reaches a standby of another cluster (another {@code initdb}, so another system
 * identifier) whose WAL position is numerically ahead of this primary's: it would show no lag and
 * serve reads of another database. The library refuses it, says so in the log and in
 * {@link RoutingStatus}, naming it by its masked URL, and routes to the standby of its own cluster.
 */
@ExtendWith(RoutingLeakCheck.class)
class ForeignReplicaIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(1);

    static PostgresCluster cluster;
    static PostgresCluster other;

    @BeforeAll
    static void twoClusters() throws SQLException {
        cluster = DB.cluster();
        createSchema(cluster);
        other = PostgresCluster.builder().standbys(1).start();
        // Move the other cluster's WAL well past this one's, so that its standby looks caught up.
        try (Connection admin = other.adminConnection(other.primary());
                Statement s = admin.createStatement()) {
            s.execute("create table filler (x int)");
            for (int i = 0; i < 6; i++) {
                s.execute("insert into filler values (" + i + ")");
                s.execute("select pg_switch_wal()");
            }
        }
        other.awaitCaughtUp(Duration.ofSeconds(30));
        assertThat(other.replayLsn(other.standby(1)).asLong())
                .as("the foreign standby is ahead of this primary")
                .isGreaterThan(cluster.currentWalLsn().asLong());
    }

    @AfterAll
    static void stopOther() {
        if (other != null) {
            other.close();
        }
    }

    @Test
    void standbyOfAnotherCluster_isRefused_namedInTheLogAndTheStatus_andGetsNoReads() {
        final String foreignUrl = other.standby(1).jdbcUrl();
        final Logger monitorLog =
                (Logger) LoggerFactory.getLogger("io.github.hibernaterouting.routing.internal.replicas.ReplicaMonitor");
        final ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        monitorLog.addAppender(logged);
        final EntityManagerFactory emf = emf(
                cluster, Map.of(RoutingSettings.REPLICA_URLS, cluster.standby(1).jdbcUrl() + "," + foreignUrl));
        try (emf) {
            final Set<Integer> ports = new HashSet<>();
            for (int i = 0; i < 10; i++) {
                try (EntityManager em = emf.createEntityManager()) {
                    ports.add(((Number) em.createNativeQuery("select inet_server_port()")
                                    .getSingleResult())
                            .intValue());
                }
            }
            assertThat(ports)
                    .as(
                            "only the standby of the primary's own cluster (port %d) serves reads (%s)",
                            cluster.standby(1).port(), routingState(emf))
                    .containsExactly(cluster.standby(1).port());

            final RoutingStatus.Node foreign = RoutingStatus.of(emf).nodes().get(2);
            assertThat(foreign.up()).isFalse();
            assertThat(foreign.problem())
                    .contains("replica2")
                    .contains(Masking.url(foreignUrl))
                    .contains("another cluster");
            assertThat(RoutingStatus.of(emf).nodes().get(1).problem()).isNull();
            assertThat(List.copyOf(logged.list))
                    .anyMatch(e -> e.getLevel() == ch.qos.logback.classic.Level.ERROR
                            && e.getFormattedMessage().contains(Masking.url(foreignUrl))
                            && e.getFormattedMessage().contains("another cluster"));
        } finally {
            monitorLog.detachAppender(logged);
        }
    }

    @Test
    void roleThatCannotReadTheSystemIdentifier_failsTheBootstrap_namingTheGrant() throws SQLException {
        onPrimary(cluster, "select 1");
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement()) {
            s.execute("revoke execute on function pg_catalog.pg_control_system() from public");
        }
        try {
            assertThatThrownBy(() -> emf(cluster, Map.of()).close())
                    .hasStackTraceContaining(
                            "grant execute on function pg_catalog.pg_control_system() to " + cluster.user());
        } finally {
            try (Connection admin = cluster.adminConnection(cluster.primary());
                    Statement s = admin.createStatement()) {
                s.execute("grant execute on function pg_catalog.pg_control_system() to public");
            }
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
        }
    }
}
