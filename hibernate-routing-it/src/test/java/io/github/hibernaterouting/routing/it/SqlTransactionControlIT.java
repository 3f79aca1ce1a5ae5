package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import org.hibernate.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A transaction opened with SQL ({@code BEGIN}, {@code START TRANSACTION}) runs on one server from its
 * {@code BEGIN} to its {@code COMMIT}, {@code END}, {@code ROLLBACK} or {@code ABORT}: a read-write one
 * on the primary, a read-only one on one replica; {@code COMMIT AND CHAIN} and savepoints stay there,
 * and the routed connection routes normally once it ended. After every unit of work no backend, on any
 * node, is left inside a transaction ({@code pg_stat_activity}). A {@code BEGIN} inside a JDBC
 * transaction opens nothing (PostgreSQL warns), and keeps the rest of that transaction on the primary.
 */
@ExtendWith(RoutingLeakCheck.class)
class SqlTransactionControlIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    private static final String INSERT = "insert into note (id, text) values (nextval('note_seq'), 'sql')";

    @Test
    void beginInsertRollback_inAutoCommit_writesNothing_andLeavesNoTransactionOpen() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                sql(connection, "begin");
                sql(connection, INSERT);
                assertThat(nodeOf(connection))
                        .as("the transaction's statements")
                        .isEqualTo(cluster.primary());
                sql(connection, "rollback");
            });
        }
        assertThat(countOnPrimary(cluster, "note")).as("rolled back").isZero();
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void readWriteTransaction_runsOnThePrimary_andItsCommitPositionIsCapturedAtCommit() throws SQLException {
        try (RoutingScope scope = RoutingScope.open(null);
                EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                sql(connection, "start transaction");
                sql(connection, INSERT);
                assertThat(nodeOf(connection)).isEqualTo(cluster.primary());
                sql(connection, "commit");
                assertThat(scope.lastCommit())
                        .as("the position of the SQL transaction's commit, taken right after COMMIT")
                        .isNotNull();
            });
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void transactionThatOnlyRead_endsOnThePrimary_thenTheConnectionReadsOnAReplicaAgain() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                sql(connection, "begin");
                assertThat(nodeOf(connection)).isEqualTo(cluster.primary());
                sql(connection, "end");
                assertThat(nodeOf(connection).isPrimary())
                        .as("after the end, routed as before")
                        .isFalse();
                final Backend replica = backend(connection);
                assertThat(replica.state()).isEqualTo("idle");
            });
        }
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void readOnlyTransaction_runsOnOneReplica_whichRefusesItsWrites() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                sql(connection, "begin read only");
                final Backend replica = backend(connection);
                assertThat(replica.state()).isEqualTo("idle in transaction");
                assertThatThrownBy(() -> sql(connection, INSERT))
                        .as("a write in a read-only transaction")
                        .isInstanceOfSatisfying(
                                SQLException.class,
                                e -> assertThat(e.getSQLState())
                                        .as("read_only_sql_transaction")
                                        .isEqualTo("25006"));
                assertThat(replica.state())
                        .as("the failed write ran there, in the transaction")
                        .isEqualTo("idle in transaction (aborted)");
                sql(connection, "rollback");
                assertThat(replica.state()).isEqualTo("idle");
                sql(connection, "begin read only");
                try (Statement plain = connection.createStatement()) {
                    assertThatThrownBy(() -> plain.executeUpdate(INSERT))
                            .as("a plain JDBC Statement, whose SQL is not known up front, in the same transaction")
                            .isInstanceOfSatisfying(
                                    SQLException.class,
                                    e -> assertThat(e.getSQLState()).isEqualTo("25006"));
                }
                sql(connection, "rollback");
            });
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("a refused write does not escalate the unit of work")
                    .isFalse();
        }
        assertThat(countOnPrimary(cluster, "note")).isZero();
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void commitAndChain_andSavepoints_stayOnThePrimary_evenUnderStaleRead() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.setProperty(RoutingSettings.STRATEGY, Strategy.STALE_READ);
            em.unwrap(Session.class).doWork(connection -> {
                sql(connection, "begin");
                sql(connection, INSERT);
                sql(connection, "commit and chain");
                assertThat(nodeOf(connection))
                        .as("STALE_READ reads a replica after a write, but not inside the chained transaction")
                        .isEqualTo(cluster.primary());
                sql(connection, "savepoint before_second");
                sql(connection, INSERT);
                sql(connection, "rollback to savepoint before_second");
                sql(connection, INSERT);
                sql(connection, "release savepoint before_second");
                sql(connection, "rollback");
            });
        }
        assertThat(countOnPrimary(cluster, "note"))
                .as("the first insert committed by COMMIT AND CHAIN, the rest rolled back")
                .isEqualTo(1);
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void transactionLeftOpen_isRolledBack_beforeItsConnectionGoesBackToThePool() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                sql(connection, "begin");
                sql(connection, INSERT);
            });
        }
        assertThat(countOnPrimary(cluster, "note")).isZero();
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> sql(connection, "begin read only"));
        }
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void beginInsideAJdbcTransaction_opensNothing_andKeepsTheRestOfItOnThePrimary() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("the transaction's first read, lazily on a replica")
                    .isFalse();
            em.unwrap(Session.class).doWork(connection -> {
                try (PreparedStatement begin = connection.prepareStatement("begin")) {
                    begin.execute();
                    assertThat(nodeOf(connection))
                            .as("after the BEGIN, the transaction runs on the primary")
                            .isEqualTo(cluster.primary());
                    final SQLWarning warning = begin.getWarnings();
                    assertThat(warning == null ? null : warning.getMessage())
                            .as("PostgreSQL's warning")
                            .contains("already a transaction in progress");
                }
            });
            em.persist(new Note("in the JDBC transaction"));
            em.flush();
            em.getTransaction().rollback();
        }
        assertThat(countOnPrimary(cluster, "note")).isZero();
        assertThat(backendsInTransaction()).isEmpty();
    }
}
