package io.github.hibernaterouting.routing.internal;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.bootstrap.RoutingRuntime;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;

/**
 * Persistence units on the test cluster for the ITs that look inside the library (its pools, its
 * meters), which must stay in this module and package.
 *
 * <p>The settings repeat {@code io.github.hibernaterouting.testing.RoutingTestSupport#settings}
 * on purpose: that module depends on this one, so this module's tests cannot use it (Maven would
 * see a cycle). Every other IT of the library lives in {@code hibernate-routing-it} and uses it.
 */
final class InternalItSupport {
    private InternalItSupport() {}

    static void createSchema(PostgresCluster cluster) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute("drop table if exists account, note cascade");
            s.execute("drop sequence if exists account_seq, note_seq");
            s.execute("create sequence account_seq start 1 increment 50");
            s.execute("create sequence note_seq start 1 increment 50");
            s.execute(
                    "create table account (id bigint primary key, name text, balance int not null, version bigint not null)");
            s.execute("create table note (id bigint primary key, text text)");
        }
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    /** The shared test settings (see the class comment); {@code overrides} win, null values remove. */
    static EntityManagerFactory emf(PostgresCluster cluster, Map<String, ?> overrides) {
        final Map<String, Object> settings = cluster.persistenceProperties();
        settings.put(RoutingSettings.HEALTH_CHECK_INTERVAL, "100ms");
        settings.put(RoutingSettings.CIRCUIT_BREAKER_OPEN_DURATION, "200ms");
        settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "5");
        settings.put(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "5");
        settings.put("hibernate.hbm2ddl.auto", "none");
        settings.putAll(overrides);
        settings.values().removeIf(v -> v == null);
        final PersistenceConfiguration configuration = new PersistenceConfiguration("routing-it");
        settings.forEach(configuration::property);
        return configuration.createEntityManagerFactory();
    }

    static RoutingRuntime runtime(EntityManagerFactory emf) {
        return RoutingRuntime.of(emf);
    }

    /** The node that runs the next statement of this EntityManager, asked of the server itself. */
    static Node servedBy(PostgresCluster cluster, EntityManager em) {
        final Number port =
                (Number) em.createNativeQuery("select inet_server_port()").getSingleResult();
        return cluster.nodeForPort(port.intValue());
    }
}
