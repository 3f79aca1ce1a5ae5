package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.longOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.StampedWork;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.jpa.HibernateHints;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Escalation and transactions: a unit of work moves to the primary at its first write, and later
 * sessions of a scope that wrote follow it; a lazy read-write transaction reads on a replica without
 * holding a transaction there, unless its reads need one (a fetch size, a read-only transaction); a
 * read-write transaction above READ COMMITTED (on the connection or as the role's default) runs on
 * the primary from its first statement, a read-only one keeps one snapshot on the replica; prepared
 * statements follow the unit of work; transactions pinned to the primary.
 */
@ExtendWith(RoutingLeakCheck.class)
class EscalationAndTransactionsIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /**
     * A write inside a read-only transaction (Spring's {@code @Transactional(readOnly = true)} marks the
     * connection read-only) goes to the primary, as any write, in a transaction read-only there too: the
     * primary refuses it (SQLSTATE 25006), as it would without the library, and nothing is written.
     */
    @Test
    void aWriteInsideAReadOnlyTransaction_isRefusedByThePrimary_andWritesNothing() throws SQLException {
        final long id = createNote("kept");
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> connection.setReadOnly(true));
            em.getTransaction().begin();
            assertThatThrownBy(() -> em.createNativeQuery("update note set text = 'written' where id = " + id)
                            .executeUpdate())
                    .satisfies(e -> assertThat(RoutingItSupport.causeOfType(e, SQLException.class)
                                    .getSQLState())
                            .isEqualTo("25006"));
            em.getTransaction().rollback();
        }
        assertThat(longOnPrimary(cluster, "select count(*) from note where text = 'kept' and id = " + id))
                .isEqualTo(1);
    }

    @Test
    void write_goesToPrimary_andLaterReadsInTheSameSessionToo() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.persist(new Note("written"));
            em.flush();
            assertThat(servedBy(cluster, em).isPrimary()).isTrue();
            em.getTransaction().commit();
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("read after commit in the same session")
                    .isTrue();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
        try (EntityManager fresh = emf.createEntityManager()) {
            assertThat(servedBy(cluster, fresh).isPrimary())
                    .as("a new session starts on a replica")
                    .isFalse();
        }
    }

    @Test
    void lazyTransaction_readsOnReplica_thenMovesToPrimaryAtFirstWrite() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("first read of the transaction")
                    .isFalse();
            em.persist(new Note("lazy"));
            em.flush();
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("read after the write, same transaction")
                    .isTrue();
            em.getTransaction().commit();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
    }

    @Test
    void primaryTransactionMode_pinsReadWriteTransactionsToPrimaryFromBegin() {
        final EntityManagerFactory pinned = emf(cluster, Map.of(RoutingSettings.TRANSACTIONS, "PRIMARY"));
        try (pinned;
                EntityManager em = pinned.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(servedBy(cluster, em).isPrimary()).isTrue();
            em.getTransaction().commit();
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("outside a transaction reads still use replicas")
                    .isFalse();
        }
    }

    @Test
    void writeInScope_sendsLaterSessionsOfThatScopeToPrimary() {
        try (RoutingScope scope = RoutingScope.open(null)) {
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary()).isFalse();
            }
            createNote("scoped");
            assertThat(scope.hasWritten()).isTrue();
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary()).isTrue();
            }
        }
        try (EntityManager em = emf.createEntityManager()) {
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("outside the scope")
                    .isFalse();
        }
    }

    /** Reads note {@code id} in a new EntityManager; the node that served it, and whether it saw the note. */
    private static String readNote(long id) {
        try (EntityManager em = emf.createEntityManager()) {
            final Note note = em.find(Note.class, id);
            return (note == null ? "missing" : note.text) + " on " + servedBy(cluster, em);
        }
    }

    @Test
    void nestedScope_openedAfterItsParentWrote_readsWhatTheParentWrote() {
        // A commit every standby replayed just before the pause: they stay within the lag bound.
        createNote("replayed everywhere");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        // Like a mutation request's scope, without an actor: no stamp to carry the write.
        try (RoutingScope request = RoutingScope.open(Strategy.PRIMARY)) {
            final long id = createNote("written in the parent");
            assertThat(request.lastCommit()).isNotNull();
            assertThat(Routing.with(Strategy.READ_AFTER_WRITE, () -> readNote(id)))
                    .as("a READ_AFTER_WRITE block nested in the scope that wrote")
                    .startsWith("written in the parent on ");
            try (RoutingScope inherits = RoutingScope.open(null)) {
                assertThat(readNote(id)).startsWith("written in the parent on ");
            }
        }
    }

    @Test
    void stampedWorker_runningInsideAScopeThatWrote_readsWhatTheScopeWrote() {
        createNote("replayed everywhere");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        // The message was stamped before the scope's write: every standby has its position.
        final ConsistencyToken stamp = ReadYourWrites.currentPosition(emf);
        pauseAllStandbys();
        try (RoutingScope scope = RoutingScope.open(null)) {
            final long id = createNote("written in the scope");
            assertThat(StampedWork.builder(emf).build().call(stamp, 1, () -> readNote(id)))
                    .as("a stamped worker running inside the scope that wrote")
                    .startsWith("written in the scope on ");
        }
    }

    @Test
    void readWriteTransaction_readsOnReplicaWithoutATransactionThere_thenWritesOnPrimary() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Backend replica = backend(em);
            em.createNativeQuery("select count(*) from note").getSingleResult();
            assertThat(replica.state())
                    .as("the read-write transaction's reads hold no transaction on the standby")
                    .isEqualTo("idle");
            em.persist(new Note("after reads"));
            em.flush();
            em.getTransaction().commit();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
    }

    @Test
    void readWriteTransaction_rolledBack_afterReadsOnReplica_writesNothing() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            backend(em);
            em.persist(new Note("rolled back"));
            em.flush();
            em.getTransaction().rollback();
        }
        assertThat(countOnPrimary(cluster, "note")).isZero();
    }

    @Test
    void fetchSize_opensAReadOnlyTransactionOnTheReplica_soRowsStreamThroughACursor() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Backend replica = backend(em);
            assertThat(replica.state()).isEqualTo("idle");
            @SuppressWarnings("unchecked")
            final Stream<Number> rows = em.createNativeQuery("select g from generate_series(1, 1000) g")
                    .setHint(HibernateHints.HINT_FETCH_SIZE, 10)
                    .getResultStream();
            try (rows) {
                final Iterator<Number> iterator = rows.iterator();
                assertThat(iterator.next().intValue()).isEqualTo(1);
                // pgjdbc fetched 10 rows through a portal, which only lives inside a transaction.
                assertThat(replica.state()).isEqualTo("idle in transaction");
                long count = 1;
                while (iterator.hasNext()) {
                    iterator.next();
                    count++;
                }
                assertThat(count).isEqualTo(1000);
            }
            em.getTransaction().commit();
        }
    }

    @Test
    void readOnlyTransaction_keepsItsTransactionOnTheReplica() throws SQLException {
        final SessionFactory sessionFactory = emf.unwrap(SessionFactory.class);
        try (Session session = sessionFactory.withOptions().readOnly(true).openSession()) {
            session.beginTransaction();
            final Backend replica = backend(session);
            assertThat(replica.state()).isEqualTo("idle in transaction");
            session.getTransaction().commit();
        }
    }

    private static String transactionIsolation(EntityManager em) {
        return (String) em.createNativeQuery("show transaction_isolation").getSingleResult();
    }

    @Test
    void repeatableRead_readWriteTransaction_runsOnThePrimaryFromItsFirstStatement() {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class)
                    .doWork(connection -> connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ));
            em.getTransaction().begin();
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("the transaction's first read")
                    .isTrue();
            assertThat(transactionIsolation(em)).isEqualTo("repeatable read");
            em.getTransaction().commit();
        }
    }

    @Test
    void repeatableRead_readOnlyTransaction_keepsOneSnapshotOnTheReplica() throws SQLException {
        final SessionFactory sessionFactory = emf.unwrap(SessionFactory.class);
        try (Session session = sessionFactory.withOptions().readOnly(true).openSession()) {
            session.doWork(connection -> connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ));
            session.beginTransaction();
            final Backend replica = backend(session);
            assertThat(replica.state()).isEqualTo("idle in transaction");
            assertThat(transactionIsolation(session)).isEqualTo("repeatable read");
            session.getTransaction().commit();
        }
    }

    @Test
    void isolation_changedAfterTheTransactionRanAStatement_isRefused_asOnOneConnection() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Backend replica = backend(em);
            assertThat(replica.state())
                    .as("a read-write transaction's read at READ COMMITTED")
                    .isEqualTo("idle");
            assertThatThrownBy(() -> em.unwrap(Session.class)
                            .doWork(connection ->
                                    connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ)))
                    .hasStackTraceContaining(
                            "Cannot change transaction isolation level in the middle of a transaction");
            em.getTransaction().rollback();
        }
    }

    @Test
    void roleWhoseDefaultIsRepeatableRead_readWriteTransactionsRunOnThePrimary_readOnlyOnesOnTheReplica()
            throws SQLException {
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement()) {
            s.execute("drop role if exists rr_reader");
            s.execute("create role rr_reader login password 'rr-secret'");
            s.execute("alter role rr_reader set default_transaction_isolation = 'repeatable read'");
            s.execute("grant select on note to rr_reader");
        }
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        final EntityManagerFactory rr = emf(
                cluster,
                Map.of("jakarta.persistence.jdbc.user", "rr_reader", "jakarta.persistence.jdbc.password", "rr-secret"));
        try (rr) {
            awaitReplicasUp(rr);
            try (EntityManager em = rr.createEntityManager()) {
                em.getTransaction().begin();
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("a read-write transaction's first read")
                        .isTrue();
                assertThat(transactionIsolation(em)).isEqualTo("repeatable read");
                em.getTransaction().commit();
            }
            try (Session session =
                    rr.unwrap(SessionFactory.class).withOptions().readOnly(true).openSession()) {
                session.beginTransaction();
                final Backend replica = backend(session);
                assertThat(replica.state()).isEqualTo("idle in transaction");
                assertThat(transactionIsolation(session)).isEqualTo("repeatable read");
                session.getTransaction().commit();
            }
        }
    }

    /** What one execution of the loop's query saw: how many of the unit's rows, and which server answered. */
    private record Seen(long rows, int port) {}

    /**
     * Raw JDBC as application code writes it: a query and an insert prepared up front, then a loop
     * that inserts and runs the same query again. The query was prepared on a replica; each insert
     * escalates the unit of work, so each execution of the query must follow it to the primary.
     */
    private static List<Seen> insertThenQueryInALoop(EntityManager em, boolean executeQuery) {
        final List<Seen> seen = new ArrayList<>();
        em.unwrap(Session.class).doWork(connection -> {
            try (PreparedStatement query = connection.prepareStatement(
                            "select count(*), inet_server_port() from note where text = ?");
                    PreparedStatement insert = connection.prepareStatement(
                            "insert into note (id, text) values (nextval('note_seq'), ?)")) {
                for (int i = 0; i < 3; i++) {
                    insert.setString(1, "mine");
                    insert.executeUpdate();
                    query.setString(1, "mine");
                    final ResultSet rs;
                    if (executeQuery) {
                        rs = query.executeQuery();
                    } else {
                        assertThat(query.execute()).isTrue();
                        rs = query.getResultSet();
                    }
                    try (rs) {
                        rs.next();
                        seen.add(new Seen(rs.getLong(1), rs.getInt(2)));
                    }
                }
            }
        });
        return seen;
    }

    @Test
    void preparedStatementReusedAfterAWrite_followsTheUnitOfWorkToThePrimary_inATransaction() throws SQLException {
        final int primary = cluster.primary().port();
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(insertThenQueryInALoop(em, true))
                    .as("the query sees the transaction's own rows, on the primary")
                    .containsExactly(new Seen(1, primary), new Seen(2, primary), new Seen(3, primary));
            em.getTransaction().commit();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(3);
    }

    @Test
    void preparedStatementReusedAfterAWrite_followsTheUnitOfWorkToThePrimary_inAutoCommit() throws SQLException {
        // The standbys never get the rows: a read there would miss them, whatever the timing.
        pauseAllStandbys();
        final int primary = cluster.primary().port();
        try (EntityManager em = emf.createEntityManager()) {
            assertThat(insertThenQueryInALoop(em, false))
                    .as("execute() then getResultSet(): the unit's own committed rows, on the primary")
                    .containsExactly(new Seen(1, primary), new Seen(2, primary), new Seen(3, primary));
        }
    }
}
