package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hibernate.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A cursor runs on the physical connection that declared it: its {@code FETCH}, {@code MOVE} and
 * {@code CLOSE} follow its {@code DECLARE} there, whatever the classifier or the unit of work would
 * choose for them; a {@code DECLARE} on a replica inside a read-write transaction gets a transaction
 * there; a {@code WITH HOLD} cursor keeps its connection after its transaction ends; {@code CLOSE ALL}
 * closes the cursors of every connection.
 */
@ExtendWith(RoutingLeakCheck.class)
class SqlCursorsIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /** One row of a cursor's query: a value and the server that computed it. */
    private record Row(long value, int port) {}

    private static List<Row> fetch(Connection connection, String fetch) throws SQLException {
        final List<Row> rows = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(fetch);
                ResultSet rs = statement.executeQuery()) {
            while (rs.next()) {
                rows.add(new Row(rs.getLong(1), rs.getInt(2)));
            }
        }
        return rows;
    }

    @Test
    void cursorOverAWritingFunction_isFetchedOnThePrimaryThatDeclaredIt() throws SQLException {
        final int primary = cluster.primary().port();
        try (EntityManager em = emf.createEntityManager()) {
            // STALE_READ would send the FETCH, a read by itself, to a replica even after the write.
            em.setProperty(RoutingSettings.STRATEGY, Strategy.STALE_READ);
            em.unwrap(Session.class).doWork(connection -> {
                sql(
                        connection,
                        "declare numbered cursor with hold for"
                                + " select nextval('note_seq'), inet_server_port() from generate_series(1, 3)");
                assertThat(fetch(connection, "fetch 2 from numbered"))
                        .extracting(Row::port)
                        .containsExactly(primary, primary);
                sql(connection, "move backward 1 in numbered");
                assertThat(fetch(connection, "fetch next from numbered"))
                        .extracting(Row::port)
                        .containsExactly(primary);
                sql(connection, "close numbered");
            });
        }
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void cursorDeclaredOnAReplica_inAReadWriteTransaction_isFetchedThere_afterAWriteMovedTheTransaction()
            throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.unwrap(Session.class).doWork(connection -> {
                sql(
                        connection,
                        "declare numbers cursor for select g, inet_server_port() from generate_series(1, 10) g");
                final Backend replica = backend(connection);
                assertThat(replica.state())
                        .as("a cursor lives in a transaction: the DECLARE opened one on the replica")
                        .isEqualTo("idle in transaction");
                sql(connection, "insert into note (id, text) values (nextval('note_seq'), 'w')");
                assertThat(nodeOf(connection)).as("the transaction's own reads").isEqualTo(cluster.primary());
                assertThat(fetch(connection, "fetch 5 from numbers"))
                        .containsExactly(
                                new Row(1, replica.node().port()),
                                new Row(2, replica.node().port()),
                                new Row(3, replica.node().port()),
                                new Row(4, replica.node().port()),
                                new Row(5, replica.node().port()));
                sql(connection, "close numbers");
            });
            em.getTransaction().commit();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void withHoldCursor_keepsItsConnection_afterItsTransactionCommitted() throws SQLException {
        // One replica, so that another unit of work would get the cursor's connection from the pool.
        final EntityManagerFactory single = emf(
                cluster, Map.of(RoutingSettings.REPLICA_URLS, cluster.standby(1).jdbcUrl()));
        try (single;
                EntityManager em = single.createEntityManager();
                EntityManager other = single.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                connection.setAutoCommit(false);
                sql(
                        connection,
                        "declare kept cursor with hold for select g, inet_server_port() from generate_series(1, 3) g");
                connection.commit();
                // Another unit of work on the same thread borrows a connection of the same replica now.
                other.unwrap(Session.class)
                        .doWork(theirs -> assertThat(nodeOf(theirs)).isEqualTo(cluster.standby(1)));
                assertThat(fetch(connection, "fetch all from kept"))
                        .extracting(Row::value)
                        .containsExactly(1L, 2L, 3L);
                sql(connection, "close kept");
                connection.commit();
                connection.setAutoCommit(true);
            });
        }
        assertThat(backendsInTransaction()).isEmpty();
    }

    @Test
    void closeAll_closesTheCursorsOfEveryConnection() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.setProperty(RoutingSettings.STRATEGY, Strategy.STALE_READ);
            em.unwrap(Session.class).doWork(connection -> {
                for (int round = 0; round < 2; round++) {
                    // The same names again: PostgreSQL refuses a cursor name that is still open (42P03).
                    sql(connection, "declare on_primary cursor with hold for select nextval('note_seq'), 0");
                    sql(connection, "declare on_replica cursor with hold for select 1, inet_server_port()");
                    assertThat(fetch(connection, "fetch 1 from on_replica"))
                            .extracting(Row::port)
                            .allMatch(port -> !cluster.nodeForPort(port).isPrimary());
                    sql(connection, "close all");
                }
            });
        }
        assertThat(backendsInTransaction()).isEmpty();
    }
}
