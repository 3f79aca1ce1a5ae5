package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.hibernate.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Hibernate's own connection settings reach the library's pools: driver properties given as
 * {@code hibernate.connection.<property>} on every server, and {@code hibernate.connection.autocommit=false}
 * hands Hibernate connections without auto-commit, as its own pool would. (The isolation level is
 * {@code TransactionIsolationIT}'s.)
 */
@ExtendWith(RoutingLeakCheck.class)
class ConnectionSettingsIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    @Test
    void driverPropertiesAsHibernateConnectionKeys_reachThePrimaryAndEveryReplica() {
        final EntityManagerFactory named = emf(cluster, Map.of("hibernate.connection.ApplicationName", "shop"));
        try (named) {
            final Set<Node> nodes = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                try (EntityManager em = named.createEntityManager()) {
                    nodes.add(applicationNameIsShop(em));
                    em.getTransaction().begin();
                    em.persist(new Note("written"));
                    em.flush();
                    nodes.add(applicationNameIsShop(em));
                    em.getTransaction().commit();
                }
            }
            assertThat(nodes).containsExactlyInAnyOrderElementsOf(cluster.nodes());
        }
    }

    private static Node applicationNameIsShop(EntityManager em) {
        final Object[] row =
                (Object[]) em.createNativeQuery("select inet_server_port(), current_setting('application_name')")
                        .getSingleResult();
        final Node node = cluster.nodeForPort(((Number) row[0]).intValue());
        assertThat(row[1]).as("application_name on %s", node).isEqualTo("shop");
        return node;
    }

    @Test
    void autocommitFalse_handsHibernateConnectionsWithoutAutoCommit_soUncommittedWorkIsRolledBack()
            throws SQLException {
        final EntityManagerFactory manual = emf(cluster, Map.of("hibernate.connection.autocommit", "false"));
        try (manual;
                EntityManager em = manual.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                assertThat(connection.getAutoCommit()).isFalse();
                try (PreparedStatement insert =
                        connection.prepareStatement("insert into note (id, text) values (nextval('note_seq'), ?)")) {
                    insert.setString(1, "never committed");
                    insert.executeUpdate();
                }
                try (PreparedStatement count = connection.prepareStatement("select count(*) from note");
                        ResultSet rs = count.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1))
                            .as("the transaction sees its own row")
                            .isEqualTo(1);
                }
            });
        }
        assertThat(countOnPrimary(cluster, "note"))
                .as("closed without a commit: rolled back")
                .isZero();
    }
}
