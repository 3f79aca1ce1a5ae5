package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.replication.LogSequenceNumber;

/**
 * What a read right after one's own write costs the standbys: when the gate must ask where replay
 * stands, it asks one standby at a time and stops at the first that has the position, so a read that
 * any standby can serve costs one position query, not one per standby. Counted by each standby's
 * {@code pg_stat_statements}, never timed.
 */
@ExtendWith(RoutingLeakCheck.class)
class LsnGateCheckIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2)
            .configure(builder -> builder.serverSetting("shared_preload_libraries", "pg_stat_statements"));

    @Test
    void readAfterWrite_thatEveryStandbyCanServe_asksOneStandbyForItsPosition(PostgresCluster cluster)
            throws SQLException {
        try (Connection c = cluster.adminConnection(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute("create extension if not exists pg_stat_statements");
        }
        createSchema(cluster);
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        // No health check between the write and the read: the gate, not the check, must learn the position.
        try (EntityManagerFactory routed = emf(
                cluster,
                Map.of(RoutingSettings.HEALTH_CHECK_INTERVAL, "60s", RoutingSettings.METER_REGISTRY, meters))) {
            // Four rounds: the standby asked first rotates, so each one is asked first at least once.
            for (int round = 0; round < 4; round++) {
                final long id;
                final long commit;
                try (RoutingScope scope = RoutingScope.builder().actor("writer").open();
                        EntityManager em = routed.createEntityManager()) {
                    em.getTransaction().begin();
                    final Note note = new Note("round " + round);
                    em.persist(note);
                    em.getTransaction().commit();
                    id = note.id;
                    commit = scope.lastCommit().position();
                }
                // Both standbys have the write before the read: whichever the gate asks first can serve it.
                for (Node standby : cluster.standbys()) {
                    cluster.awaitReplay(standby, LogSequenceNumber.valueOf(commit), Duration.ofSeconds(30));
                    resetStatements(cluster, standby);
                }
                final long checkedBefore = checked(meters);
                try (RoutingScope ignored =
                                RoutingScope.builder().actor("writer").open();
                        EntityManager em = routed.createEntityManager()) {
                    assertThat(em.find(Note.class, id))
                            .as("round %d: the actor's own write", round)
                            .isNotNull();
                    assertThat(servedBy(cluster, em).isPrimary())
                            .as("round %d: a standby served the read", round)
                            .isFalse();
                }
                final Map<String, Long> asked = new LinkedHashMap<>();
                for (Node standby : cluster.standbys()) {
                    asked.put(standby.name(), positionQueries(cluster, standby));
                }
                assertThat(checked(meters) - checkedBefore)
                        .as("round %d: the gate had to ask (its known positions predate the write)", round)
                        .isEqualTo(1);
                assertThat(asked.values().stream().mapToLong(Long::longValue).sum())
                        .as("round %d: position queries per standby %s", round, asked)
                        .isEqualTo(1);
            }
        }
    }

    private static long checked(SimpleMeterRegistry meters) {
        final Counter counter = meters.find("hibernate.routing.lsn_gate")
                .tag("outcome", "checked")
                .counter();
        return counter == null ? 0 : (long) counter.count();
    }

    private static void resetStatements(PostgresCluster cluster, Node node) throws SQLException {
        try (Connection c = cluster.adminConnection(node);
                Statement s = c.createStatement()) {
            s.execute("select pg_stat_statements_reset()");
        }
    }

    /** How many times the LSN gate's position query ran on {@code node} since the last reset. */
    private static long positionQueries(PostgresCluster cluster, Node node) throws SQLException {
        try (Connection c = cluster.adminConnection(node);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "select coalesce(sum(calls), 0) from pg_stat_statements where query like '%lsn-gate%'"
                                + " and query not like '%pg_stat_statements%'")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
