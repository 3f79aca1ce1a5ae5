package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Transactions above READ COMMITTED run on one server from their first statement, so they keep one
 * snapshot and PostgreSQL's serialization-failure detection: the primary, unless the transaction is
 * read-only at REPEATABLE READ, which a standby serves as one transaction. A standby refuses
 * SERIALIZABLE, read-only and deferrable included, so a read-only SERIALIZABLE transaction runs on the
 * primary too. The isolation may come from {@code Connection.setTransactionIsolation} before
 * {@code begin}, from {@code SET TRANSACTION ISOLATION LEVEL} as the transaction's first SQL, or from
 * {@code hibernate.connection.isolation}.
 */
@ExtendWith(RoutingLeakCheck.class)
class TransactionIsolationIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    private static void isolation(EntityManager em, int level) {
        em.unwrap(Session.class).doWork(connection -> connection.setTransactionIsolation(level));
    }

    private static void run(EntityManager em, String sql) {
        em.unwrap(Session.class).doWork(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
                statement.execute();
            }
        });
    }

    private static String transactionIsolation(EntityManager em) {
        return (String) em.createNativeQuery("show transaction_isolation").getSingleResult();
    }

    private static String textOf(EntityManager em, long id) {
        return (String)
                em.createNativeQuery("select text from note where id = " + id).getSingleResult();
    }

    private static String sqlState(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return null;
    }

    /**
     * Inside an open read-write transaction above READ COMMITTED: reads the note, lets another
     * connection change it and commit, then updates it. With one snapshot from the first read on, on
     * the server that runs the update, PostgreSQL refuses the update (SQLSTATE 40001) instead of
     * overwriting the change the transaction never saw.
     */
    private static void concurrentUpdateIsDetected(EntityManager em, long id) throws SQLException {
        assertThat(textOf(em, id)).isEqualTo("before");
        assertThat(servedBy(cluster, em)).as("the transaction's first reads").isEqualTo(cluster.primary());
        onPrimary(cluster, "update note set text = 'theirs' where id = " + id);
        assertThatThrownBy(() -> em.createNativeQuery("update note set text = 'mine' where id = " + id)
                        .executeUpdate())
                .as("the update of a row changed since the transaction's snapshot")
                .satisfies(e -> assertThat(sqlState(e)).isEqualTo("40001"));
        em.getTransaction().rollback();
    }

    @Test
    void serializable_setOnTheConnectionBeforeBegin_runsTheWholeTransactionOnThePrimary() {
        final long id = createNote("there");
        try (EntityManager em = emf.createEntityManager()) {
            isolation(em, Connection.TRANSACTION_SERIALIZABLE);
            em.getTransaction().begin();
            final Note note = em.find(Note.class, id);
            assertThat(note).as("an existing row").isNotNull();
            assertThat(note.text).isEqualTo("there");
            assertThat(servedBy(cluster, em)).isEqualTo(cluster.primary());
            assertThat(transactionIsolation(em)).isEqualTo("serializable");
            em.getTransaction().commit();
        }
    }

    @Test
    void repeatableRead_setOnTheConnectionBeforeBegin_readThenWrite_keepsOneSnapshotOnThePrimary() throws SQLException {
        final long id = createNote("before");
        try (EntityManager em = emf.createEntityManager()) {
            isolation(em, Connection.TRANSACTION_REPEATABLE_READ);
            em.getTransaction().begin();
            assertThat(transactionIsolation(em)).isEqualTo("repeatable read");
            concurrentUpdateIsDetected(em, id);
        }
        assertThat(textOf(id)).isEqualTo("theirs");
    }

    @Test
    void repeatableRead_setByTheTransactionsFirstSql_readThenWrite_keepsOneSnapshotOnThePrimary() throws SQLException {
        final long id = createNote("before");
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            run(em, "set transaction isolation level repeatable read");
            assertThat(transactionIsolation(em)).isEqualTo("repeatable read");
            concurrentUpdateIsDetected(em, id);
        }
        assertThat(textOf(id)).isEqualTo("theirs");
    }

    @Test
    void readOnlySerializableTransaction_runsOnThePrimary_becauseAStandbyRefusesIt() {
        final long id = createNote("there");
        final SessionFactory sessionFactory = emf.unwrap(SessionFactory.class);
        try (Session session = sessionFactory.withOptions().readOnly(true).openSession()) {
            session.doWork(connection -> connection.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE));
            session.beginTransaction();
            assertThat(session.find(Note.class, id).text).isEqualTo("there");
            assertThat(servedBy(cluster, session)).isEqualTo(cluster.primary());
            assertThat(transactionIsolation(session)).isEqualTo("serializable");
            session.getTransaction().commit();
        }
    }

    @Test
    void standby_refusesSerializable_evenReadOnlyAndDeferrable() throws SQLException {
        try (Connection standby = cluster.connect(cluster.standby(1));
                Statement statement = standby.createStatement()) {
            for (String begin : new String[] {
                "begin isolation level serializable",
                "begin isolation level serializable read only",
                "begin isolation level serializable read only deferrable"
            }) {
                assertThatThrownBy(() -> statement.execute(begin))
                        .as(begin)
                        .hasMessageContaining("cannot use serializable mode in a hot standby")
                        .satisfies(e -> assertThat(sqlState(e)).isEqualTo("0A000"));
                statement.execute("rollback");
            }
            // As JDBC does it: the session default, then a read-only transaction.
            standby.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
            standby.setReadOnly(true);
            standby.setAutoCommit(false);
            assertThatThrownBy(() -> statement.execute("select 1"))
                    .hasMessageContaining("cannot use serializable mode in a hot standby")
                    .satisfies(e -> assertThat(sqlState(e)).isEqualTo("0A000"));
            standby.rollback();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"SERIALIZABLE", "TRANSACTION_SERIALIZABLE", "8"})
    void hibernateConnectionIsolation_serializable_yieldsSerializableTransactionsOnThePrimary(String value) {
        final long id = createNote("there");
        final EntityManagerFactory serializable = emf(cluster, Map.of("hibernate.connection.isolation", value));
        try (serializable;
                EntityManager em = serializable.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(em.find(Note.class, id).text).isEqualTo("there");
            assertThat(servedBy(cluster, em)).as("the transaction's first read").isEqualTo(cluster.primary());
            em.persist(new Note("written"));
            em.flush();
            assertThat(transactionIsolation(em)).isEqualTo("serializable");
            em.getTransaction().commit();
        }
    }

    @Test
    void hibernateConnectionIsolation_repeatableRead_readWriteOnThePrimary_readOnlyOnAReplica() throws SQLException {
        final long id = createNote("before");
        final EntityManagerFactory repeatable =
                emf(cluster, Map.of("hibernate.connection.isolation", "REPEATABLE_READ"));
        try (repeatable) {
            try (EntityManager em = repeatable.createEntityManager()) {
                em.getTransaction().begin();
                assertThat(transactionIsolation(em)).isEqualTo("repeatable read");
                concurrentUpdateIsDetected(em, id);
            }
            try (Session session = repeatable
                    .unwrap(SessionFactory.class)
                    .withOptions()
                    .readOnly(true)
                    .openSession()) {
                session.beginTransaction();
                final Backend replica = backend(session);
                assertThat(replica.state()).as("one transaction on the replica").isEqualTo("idle in transaction");
                assertThat(transactionIsolation(session)).isEqualTo("repeatable read");
                session.getTransaction().commit();
            }
        }
    }

    private static String textOf(long id) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                var rs = s.executeQuery("select text from note where id = " + id)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
