package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import jakarta.persistence.PersistenceUnitTransactionType;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The primary and the replicas from data sources the application (or its server) supplies, as
 * objects or JNDI names, instead of URLs: routing works as with URLs, the library builds no pool of
 * its own, and combinations that would run unsafely fail the bootstrap.
 */
@ExtendWith(RoutingLeakCheck.class)
class DataSourceModeIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    static PostgresCluster cluster;
    private final List<HikariDataSource> pools = new ArrayList<>();
    private HikariDataSource primary;
    private List<HikariDataSource> replicas;

    @BeforeAll
    static void schema() throws SQLException {
        cluster = DB.cluster();
        RoutingItSupport.createSchema(cluster);
    }

    @BeforeEach
    void applicationPools() {
        primary = pool("app-primary", cluster.primary());
        replicas = List.of(pool("app-replica1", cluster.standby(1)), pool("app-replica2", cluster.standby(2)));
    }

    @AfterEach
    void closePools() {
        pools.forEach(HikariDataSource::close);
        pools.clear();
    }

    private HikariDataSource pool(String name, Node node) {
        final HikariConfig config = new HikariConfig();
        config.setPoolName(name);
        config.setJdbcUrl(node.jdbcUrl());
        config.setUsername(cluster.user());
        config.setPassword(cluster.password());
        config.setMaximumPoolSize(3);
        final HikariDataSource pool = new HikariDataSource(config);
        pools.add(pool);
        return pool;
    }

    /** The shared test settings with every URL removed, plus {@code sources}. */
    private static Map<String, Object> withoutUrls(Map<String, Object> sources) {
        final Map<String, Object> overrides = new HashMap<>();
        overrides.put("jakarta.persistence.jdbc.url", null);
        overrides.put("jakarta.persistence.jdbc.user", null);
        overrides.put("jakarta.persistence.jdbc.password", null);
        overrides.put(RoutingSettings.REPLICA_URLS, null);
        overrides.putAll(sources);
        return RoutingItSupport.withoutCache(overrides);
    }

    private static EntityManagerFactory emf(Map<String, Object> sources) {
        return RoutingTestSupport.emf("datasource-mode", cluster, withoutUrls(sources), Account.class, Note.class);
    }

    private static void assertRoutes(EntityManagerFactory emf) {
        try (EntityManager em = emf.createEntityManager()) {
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("a read (%s)", routingState(emf))
                    .isFalse();
        }
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.persist(new Note("from a supplied data source"));
            em.flush();
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("a read after the write, in its transaction (%s)", routingState(emf))
                    .isTrue();
            em.getTransaction().commit();
        }
    }

    @Test
    void dataSourceObjects_routeAsUrlsDo_andTheLibraryPoolsNothing() {
        final Map<String, Object> sources = new HashMap<>();
        sources.put("hibernate.connection.datasource", primary);
        sources.put(RoutingSettings.REPLICA_DATASOURCES, replicas);
        try (EntityManagerFactory emf = emf(sources)) {
            RoutingTestSupport.awaitReplicasUp(emf);
            assertRoutes(emf);
            try (EntityManager em = emf.createEntityManager()) {
                em.getTransaction().begin();
                em.persist(new Note("held"));
                em.flush();
                assertThat(primary.getHikariPoolMXBean().getActiveConnections())
                        .as("the write runs on a connection of the application's primary pool")
                        .isEqualTo(1);
                em.getTransaction().commit();
            }
            final List<RoutingStatus.Node> nodes = RoutingStatus.of(emf).nodes();
            assertThat(nodes).extracting(node -> node.pool().maximum()).containsOnly(3);
            assertThat(Thread.getAllStackTraces().keySet())
                    .extracting(Thread::getName)
                    .as("no HikariCP pool of the library's own")
                    .noneMatch(name -> name.startsWith("hibernate-routing-primary")
                            || name.startsWith("hibernate-routing-replica"));
        }
    }

    /**
     * A replica data source the library did not build gives connections whose transactions are
     * read-only only where pgjdbc's {@code setReadOnly} reaches (inside a transaction, by default):
     * the library makes each one's session read-only on its first read, in auto-commit mode and
     * after a transaction that rolled back too, and leaves the primary's alone.
     */
    @Test
    void suppliedReplicaDataSource_isReadOnlyAtTheSessionLevel_afterItsFirstRead() throws SQLException {
        final HikariConfig config = new HikariConfig();
        config.setPoolName("app-replica-one-connection");
        config.setJdbcUrl(cluster.standby(1).jdbcUrl());
        config.setUsername(cluster.user());
        config.setPassword(cluster.password());
        // One connection: the one the library read on is the one asked below.
        config.setMaximumPoolSize(1);
        final HikariDataSource replica = new HikariDataSource(config);
        pools.add(replica);
        assertThat(defaultReadOnly(replica)).as("before the library used it").isEqualTo("off");

        final Map<String, Object> sources = new HashMap<>();
        sources.put("hibernate.connection.datasource", primary);
        sources.put(RoutingSettings.REPLICA_DATASOURCES, List.of(replica));
        try (EntityManagerFactory emf = emf(sources)) {
            RoutingTestSupport.awaitReplicasUp(emf);
            // First read in a transaction that rolls back: what the library sets must outlive it.
            try (EntityManager em = emf.createEntityManager()) {
                em.getTransaction().begin();
                assertThat(servedBy(cluster, em).isPrimary())
                        .as(routingState(emf))
                        .isFalse();
                em.getTransaction().rollback();
            }
            assertThat(defaultReadOnly(replica)).isEqualTo("on");
            try (EntityManager em = emf.createEntityManager()) {
                // An auto-commit read.
                assertThat(servedBy(cluster, em).isPrimary())
                        .as(routingState(emf))
                        .isFalse();
            }
            assertThat(defaultReadOnly(replica)).isEqualTo("on");
            assertThat(defaultReadOnly(primary)).as("the primary's connections").isEqualTo("off");
        }
    }

    /** {@code default_transaction_read_only} of a connection of {@code pool}, asked past the library. */
    private static String defaultReadOnly(HikariDataSource pool) throws SQLException {
        try (java.sql.Connection connection = pool.getConnection();
                java.sql.Statement statement = connection.createStatement();
                java.sql.ResultSet rs = statement.executeQuery("show default_transaction_read_only")) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void jndiNames_areLookedUpThroughHibernatesJndiService() {
        MapJndi.bind("java:comp/env/jdbc/primary", primary);
        MapJndi.bind("java:comp/env/jdbc/replica1", replicas.get(0));
        MapJndi.bind("java:comp/env/jdbc/replica2", replicas.get(1));
        final Map<String, Object> sources = new HashMap<>();
        sources.put("hibernate.jndi.class", MapJndi.class.getName());
        sources.put("hibernate.connection.datasource", "java:comp/env/jdbc/primary");
        sources.put(RoutingSettings.REPLICA_DATASOURCES, "java:comp/env/jdbc/replica1, java:comp/env/jdbc/replica2");
        try (EntityManagerFactory emf = emf(sources)) {
            RoutingTestSupport.awaitReplicasUp(emf);
            assertRoutes(emf);
            assertThat(RoutingStatus.of(emf).nodes()).hasSize(3);
        } finally {
            MapJndi.unbind("java:comp/env/jdbc/primary");
            MapJndi.unbind("java:comp/env/jdbc/replica1");
            MapJndi.unbind("java:comp/env/jdbc/replica2");
        }
    }

    @Test
    void aReplicaJndiNameBoundToNothing_failsTheBootstrap_namingIt() {
        final Map<String, Object> sources = new HashMap<>();
        sources.put("hibernate.jndi.class", MapJndi.class.getName());
        sources.put("hibernate.connection.datasource", primary);
        sources.put(RoutingSettings.REPLICA_DATASOURCES, "java:comp/env/jdbc/nowhere");
        assertThatThrownBy(() -> emf(sources).close())
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("java:comp/env/jdbc/nowhere")
                .hasMessageContaining(RoutingSettings.REPLICA_DATASOURCES);
    }

    @Test
    void replicasAsUrlsAndAsDataSourcesAtOnce_failTheBootstrap() {
        final Map<String, Object> overrides = new HashMap<>();
        overrides.put(RoutingSettings.REPLICA_DATASOURCES, replicas);
        assertThatThrownBy(() -> RoutingItSupport.emf(cluster, overrides).close())
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining(RoutingSettings.REPLICA_URLS)
                .hasMessageContaining(RoutingSettings.REPLICA_DATASOURCES);
    }

    @Test
    void jtaPersistenceUnitWithAUrlPrimary_failsTheBootstrap_namingTheFix() {
        final PersistenceConfiguration configuration = new PersistenceConfiguration("jta-with-url")
                .transactionType(PersistenceUnitTransactionType.JTA)
                .managedClass(Note.class);
        RoutingTestSupport.settings(cluster, RoutingItSupport.withoutCache(Map.of()))
                .forEach(configuration::property);
        assertThatThrownBy(() -> configuration.createEntityManagerFactory().close())
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("JTA")
                .hasMessageContaining("<jta-data-source>");
    }

    @Test
    void aSettingOfAPoolTheLibraryDoesNotBuild_failsTheBootstrap() {
        final Map<String, Object> sources = new HashMap<>();
        sources.put("hibernate.connection.datasource", primary);
        sources.put(RoutingSettings.REPLICA_DATASOURCES, replicas);
        sources.put(RoutingSettings.REPLICA_CONNECTION_TIMEOUT, "1s");
        assertThatThrownBy(() -> emf(sources).close())
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining(RoutingSettings.REPLICA_CONNECTION_TIMEOUT)
                .hasMessageContaining("where the data source is defined");
    }
}
