package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.hibernate.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replica connections are read-only at the connection level, whatever reaches them: here the
 * "replica" is the primary under another address (the in-recovery check off), so only the
 * connection's own read-only state can refuse a write. Covers auto-commit and transactions, a
 * connection that went back to the pool and came out again (HikariCP resets its state then), and
 * one whose unit of work ran {@code RESET ALL} on it.
 */
@ExtendWith(RoutingLeakCheck.class)
class ReplicaConnectionReadOnlyIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(0);

    static PostgresCluster cluster;
    static EntityManagerFactory emf;
    static ReplicaNode replica;

    @BeforeAll
    static void unitWithThePrimaryAsReplica() throws SQLException {
        cluster = DB.cluster();
        createSchema(cluster);
        emf = emf(cluster, Map.of(RoutingSettings.REPLICA_URLS, sameServer(), RoutingSettings.CHECK_RECOVERY, "false"));
        replica = runtime(emf).replicas().get(0);
    }

    @AfterAll
    static void close() {
        if (emf != null) {
            emf.close();
        }
    }

    @Test
    void autoCommitWrite_isRefusedByTheServer() throws SQLException {
        try (Connection c = replica.connections().getConnection();
                Statement s = c.createStatement()) {
            assertThat(c.getAutoCommit()).isTrue();
            assertReadOnlyRefusal(s);
            try (var rows = s.executeQuery("select count(*) from note")) {
                assertThat(rows.next()).as("reads still work").isTrue();
            }
        }
        assertThat(notes()).isZero();
    }

    @Test
    void writeInATransaction_isRefusedByTheServer() throws SQLException {
        try (Connection c = replica.connections().getConnection();
                Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            assertReadOnlyRefusal(s);
            c.rollback();
            c.setAutoCommit(true);
            // Switching auto-commit back and forth keeps the session read-only.
            assertReadOnlyRefusal(s);
        }
        assertThat(notes()).isZero();
    }

    @Test
    void connectionReturnedToThePool_staysReadOnly() throws SQLException {
        for (int i = 0; i < 3; i++) {
            try (Connection c = replica.connections().getConnection();
                    Statement s = c.createStatement()) {
                c.setAutoCommit(i % 2 == 0);
                assertReadOnlyRefusal(s);
                if (!c.getAutoCommit()) {
                    c.rollback();
                }
            }
        }
        assertThat(notes()).isZero();
    }

    @Test
    void resetAllInAUnitOfWork_doesNotLeaveAWritableConnectionInThePool() throws SQLException {
        // One replica connection, so the unit of work and the check below share it.
        final EntityManagerFactory single = emf(
                cluster,
                Map.of(
                        RoutingSettings.REPLICA_URLS, sameServer(),
                        RoutingSettings.CHECK_RECOVERY, "false",
                        RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "1"));
        try (single) {
            try (EntityManager em = single.createEntityManager()) {
                em.unwrap(Session.class).doWork(connection -> {
                    try (PreparedStatement reset = connection.prepareStatement("reset all")) {
                        reset.execute();
                    }
                    // Both statements ran on the replica connection: on any other, the setting would read "on".
                    try (PreparedStatement show = connection.prepareStatement(
                                    "select current_setting('default_transaction_read_only')");
                            ResultSet rs = show.executeQuery()) {
                        rs.next();
                        assertThat(rs.getString(1))
                                .as("RESET ALL undid the pool's init SQL on the replica connection")
                                .isEqualTo("off");
                    }
                });
            }
            final ReplicaNode onlyReplica = runtime(single).replicas().get(0);
            try (Connection c = onlyReplica.connections().getConnection();
                    Statement s = c.createStatement()) {
                assertReadOnlyRefusal(s);
            }
        }
        assertThat(notes()).isZero();
    }

    private static String sameServer() {
        final String primaryUrl = cluster.primary().jdbcUrl();
        final String sameServer = primaryUrl.replace("//127.0.0.1:", "//localhost:");
        assertThat(sameServer).isNotEqualTo(primaryUrl);
        return sameServer;
    }

    private static void assertReadOnlyRefusal(Statement s) {
        assertThatThrownBy(
                        () -> s.executeUpdate("insert into note (id, text) values (1, 'through a replica connection')"))
                .isInstanceOfSatisfying(
                        SQLException.class,
                        e -> assertThat(e.getSQLState())
                                .as("read_only_sql_transaction")
                                .isEqualTo("25006"));
    }

    private static long notes() throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                var rows = s.executeQuery("select count(*) from note")) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
