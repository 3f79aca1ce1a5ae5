package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.awaitCaughtUpAsSeenBy;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The fixture of the routing ITs, each a class of its own concern: a real primary with two streaming
 * hot standbys per class (each registers its own {@code PostgresClusterExtension}), a persistence unit
 * "routing-it" with {@link Account} and {@link Note}, and before each test empty tables, standbys
 * caught up and every replica up, as the persistence unit's health check sees them. Every test asks
 * the server which node ran a statement ({@code inet_server_port()}), or makes the answer visible in
 * the data by pausing replay on the standbys and changing a row on the primary behind their back.
 */
abstract class RoutingFixture {
    static PostgresCluster cluster;
    static EntityManagerFactory emf;

    @BeforeAll
    static void startPersistenceUnit(PostgresCluster pg) throws SQLException {
        cluster = pg;
        createSchema(cluster);
        emf = emf(cluster, Map.of());
    }

    @AfterAll
    static void closePersistenceUnit() {
        if (emf != null) {
            emf.close();
        }
    }

    @BeforeEach
    void emptyTables() throws SQLException {
        onPrimary(cluster, "delete from account; delete from note");
        // Caught up as the library sees it too: an earlier test's pause can still show in its last check.
        awaitCaughtUpAsSeenBy(cluster, emf);
    }

    long createAccount(String name, int balance) {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Account account = new Account(name, balance);
            em.persist(account);
            em.getTransaction().commit();
            return account.id;
        }
    }

    long createNote(String text) {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Note note = new Note(text);
            em.persist(note);
            em.getTransaction().commit();
            return note.id;
        }
    }

    void pauseAllStandbys() {
        cluster.standbys().forEach(cluster::pauseReplay);
    }

    static Set<Node> servedByFreshSessions(EntityManagerFactory factory, int sessions) {
        final Set<Node> nodes = new HashSet<>();
        for (int i = 0; i < sessions; i++) {
            try (EntityManager em = factory.createEntityManager()) {
                nodes.add(servedBy(cluster, em));
            }
        }
        return nodes;
    }

    /**
     * The standby backend that serves an EntityManager's reads. What a transaction leaves open there
     * is asked of the standby itself: the state {@code pg_stat_activity} reports for the backend. A
     * backend inside a transaction block reports {@code idle in transaction} between statements, one
     * in auto-commit {@code idle}; PostgreSQL sets the state before it answers, so the check is exact.
     * Only while the unit of work holds the connection: once it is back in the pool, the health check
     * may be using it.
     */
    record Backend(Node node, int pid) {
        String state() throws SQLException {
            try (Connection admin = cluster.adminConnection(node);
                    PreparedStatement query =
                            admin.prepareStatement("select state from pg_stat_activity where pid = ?")) {
                query.setInt(1, pid);
                try (ResultSet rs = query.executeQuery()) {
                    assertThat(rs.next()).as("backend %s on %s", pid, node).isTrue();
                    return rs.getString(1);
                }
            }
        }
    }

    static Backend backend(EntityManager em) {
        final Object[] row = (Object[]) em.createNativeQuery("select inet_server_port(), pg_backend_pid()")
                .getSingleResult();
        return replicaBackend(((Number) row[0]).intValue(), ((Number) row[1]).intValue());
    }

    static Backend backend(Connection connection) throws SQLException {
        try (PreparedStatement query = connection.prepareStatement("select inet_server_port(), pg_backend_pid()");
                ResultSet rs = query.executeQuery()) {
            rs.next();
            return replicaBackend(rs.getInt(1), rs.getInt(2));
        }
    }

    /** Prepares and runs {@code sql} on {@code connection}, as raw JDBC in {@code Session.doWork} does. */
    static void sql(Connection connection, String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.execute();
        }
    }

    /** The node that runs the next statement of {@code connection}, asked of the server ({@code inet_server_port()}). */
    static Node nodeOf(Connection connection) throws SQLException {
        try (PreparedStatement query = connection.prepareStatement("select inet_server_port()");
                ResultSet rs = query.executeQuery()) {
            rs.next();
            return cluster.nodeForPort(rs.getInt(1));
        }
    }

    /**
     * The client backends, on every node, that are inside a transaction block between statements
     * ({@code idle in transaction}, aborted or not), as {@code pg_stat_activity} reports them: after
     * a unit of work, a pooled connection left inside a transaction.
     */
    static List<String> backendsInTransaction() throws SQLException {
        final List<String> found = new ArrayList<>();
        for (Node node : cluster.nodes()) {
            try (Connection admin = cluster.adminConnection(node);
                    PreparedStatement query = admin.prepareStatement("select pid, state, query from pg_stat_activity"
                            + " where backend_type = 'client backend' and state like 'idle in transaction%'"
                            + " and pid <> pg_backend_pid()");
                    ResultSet rs = query.executeQuery()) {
                while (rs.next()) {
                    found.add(node + " pid " + rs.getInt(1) + " " + rs.getString(2) + " after: " + rs.getString(3));
                }
            }
        }
        return found;
    }

    static Backend replicaBackend(int port, int pid) {
        final Backend backend = new Backend(cluster.nodeForPort(port), pid);
        assertThat(backend.node().isPrimary()).as("read served by a replica").isFalse();
        return backend;
    }
}
