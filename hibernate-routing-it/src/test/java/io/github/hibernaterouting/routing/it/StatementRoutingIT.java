package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.LockModeType;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which statements go where: reads outside a transaction on a replica; locking reads, sequence
 * fetches, data-modifying CTEs, native updates and raw JDBC on the primary; Hibernate's read-only
 * sessions on a replica; the statement counts of {@code RoutingStatus}; and a persistence unit
 * without replicas left as Hibernate made it.
 */
@ExtendWith(RoutingLeakCheck.class)
class StatementRoutingIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    @Test
    void readOutsideTransaction_goesToReplica() {
        try (EntityManager em = emf.createEntityManager()) {
            assertThat(servedBy(cluster, em).isPrimary()).isFalse();
        }
    }

    @Test
    void entityRead_isServedByReplica_evenWhenPrimaryHasNewerData() throws SQLException {
        final long id = createAccount("before", 10);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update account set name = 'after' where id = " + id);
        try (EntityManager em = emf.createEntityManager()) {
            assertThat(em.find(Account.class, id).name).isEqualTo("before");
        }
    }

    @Test
    void lockingRead_goesToPrimary() {
        final long id = createAccount("locked", 1);
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            // A hot standby refuses SELECT ... FOR UPDATE, so success proves the primary ran it.
            final Account account = em.find(Account.class, id, LockModeType.PESSIMISTIC_WRITE);
            assertThat(account).isNotNull();
            assertThat(servedBy(cluster, em).isPrimary()).isTrue();
            em.getTransaction().commit();
        }
        try (EntityManager em = emf.createEntityManager()) {
            final List<?> locked = em.createNativeQuery(
                            "select id from account where id = " + id + " for no key update")
                    .getResultList();
            assertThat(locked).hasSize(1);
        }
    }

    @Test
    void sequenceFetch_goesToPrimary() {
        try (EntityManager em = emf.createEntityManager()) {
            final Number first =
                    (Number) em.createNativeQuery("select nextval('note_seq')").getSingleResult();
            final Number second =
                    (Number) em.createNativeQuery("select nextval('note_seq')").getSingleResult();
            assertThat(second.longValue()).isGreaterThan(first.longValue());
        }
    }

    @Test
    void dataModifyingCte_goesToPrimary() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Object id = em.createNativeQuery(
                            "with ins as (insert into note (id, text) values (nextval('note_seq'), 'cte') returning id) select id from ins")
                    .getSingleResult();
            em.getTransaction().commit();
            assertThat(id).isNotNull();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
    }

    @Test
    void nativeExecuteUpdate_goesToPrimary_andEscalatesTheSession() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final int rows = em.createNativeQuery("insert into note (id, text) values (nextval('note_seq'), 'native')")
                    .executeUpdate();
            em.getTransaction().commit();
            assertThat(rows).isEqualTo(1);
            assertThat(servedBy(cluster, em).isPrimary()).isTrue();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
    }

    @Test
    void rawJdbcStatementInDoWork_goesToPrimary() {
        try (EntityManager em = emf.createEntityManager()) {
            final int[] port = new int[1];
            em.unwrap(Session.class).doWork(connection -> {
                try (var statement = connection.createStatement();
                        var rs = statement.executeQuery("select inet_server_port()")) {
                    rs.next();
                    port[0] = rs.getInt(1);
                }
            });
            assertThat(cluster.nodeForPort(port[0]).isPrimary()).isTrue();
        }
    }

    @Test
    void routingStatus_countsStatementsPerNode_evenWithoutAMeterRegistry() {
        final io.github.hibernaterouting.routing.RoutingStatus before =
                io.github.hibernaterouting.routing.RoutingStatus.of(emf);
        final Set<Node> served = servedByFreshSessions(emf, 4);
        createNote("counted");
        final io.github.hibernaterouting.routing.RoutingStatus after =
                io.github.hibernaterouting.routing.RoutingStatus.of(emf);
        final long replicaReadsBefore = before.nodes().stream()
                .filter(n -> !n.primary())
                .mapToLong(n -> n.reads())
                .sum();
        final long replicaReadsAfter = after.nodes().stream()
                .filter(n -> !n.primary())
                .mapToLong(n -> n.reads())
                .sum();
        assertThat(served).noneMatch(Node::isPrimary);
        assertThat(replicaReadsAfter - replicaReadsBefore)
                .as("this persistence unit uses the global registry, which counts nothing")
                .isGreaterThanOrEqualTo(4);
        assertThat(after.nodes().get(0).writes())
                .isGreaterThan(before.nodes().get(0).writes());
        assertThat(after.decisions()).isNotEmpty();
        assertThat(after.decisions().get(0).reason()).isIn("write", "escalated", "transaction");
    }

    @Test
    void hibernateReadOnlySession_goesToReplica() {
        final SessionFactory sessionFactory = emf.unwrap(SessionFactory.class);
        try (Session session = sessionFactory.withOptions().readOnly(true).openSession()) {
            session.beginTransaction();
            final int port = session.createNativeQuery("select inet_server_port()", Integer.class)
                    .getSingleResult();
            assertThat(cluster.nodeForPort(port).isPrimary()).isFalse();
            session.getTransaction().commit();
        }
    }

    @Test
    void noReplicaConfigured_leavesHibernateUnchanged() throws SQLException {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.REPLICA_URLS, null);
        final EntityManagerFactory plain = emf(cluster, settings);
        try (plain) {
            assertThat(plain.unwrap(SessionFactoryImplementor.class)
                            .getServiceRegistry()
                            .getService(MultiTenantConnectionProvider.class))
                    .isNull();
            try (EntityManager em = plain.createEntityManager()) {
                em.getTransaction().begin();
                em.persist(new Note("plain"));
                em.getTransaction().commit();
                assertThat(servedBy(cluster, em).isPrimary()).isTrue();
            }
        }
        final EntityManagerFactory samePool = emf(
                cluster, Map.of(RoutingSettings.REPLICA_URLS, cluster.primary().jdbcUrl()));
        try (samePool) {
            assertThat(samePool.unwrap(SessionFactoryImplementor.class)
                            .getServiceRegistry()
                            .getService(MultiTenantConnectionProvider.class))
                    .as("a replica URL equal to the primary's")
                    .isNull();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
    }
}
