package io.github.hibernaterouting.testing;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Persistence units on the test kit's {@link PostgresCluster}, and what a test observes of them:
 * which server ran a statement (asked of the server itself), the data on the primary (read behind
 * the library's back), and when every replica is up. Uses only the library's public API, as an
 * application would.
 *
 * <pre>{@code
 * EntityManagerFactory emf = RoutingTestSupport.emf( "shop", cluster, Map.of(), Order.class );
 * try (EntityManager em = emf.createEntityManager()) {
 *     assertThat( RoutingTestSupport.servedBy( cluster, em ).isPrimary() ).isFalse();
 * }
 * }</pre>
 */
public final class RoutingTestSupport {
    private static final Duration REPLICAS_UP_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> PRIMARY_DATASOURCE_KEYS = List.of(
            "hibernate.connection.datasource",
            "jakarta.persistence.jtaDataSource",
            "jakarta.persistence.nonJtaDataSource",
            "javax.persistence.jtaDataSource",
            "javax.persistence.nonJtaDataSource");

    private RoutingTestSupport() {}

    /**
     * Settings for a persistence unit on {@code cluster}: its primary, every standby as a replica
     * ({@link PostgresCluster#persistenceProperties()}), a health check every 100 ms, circuit
     * breakers that stay open 200 ms, pools of at most 5 connections (for the pools the library builds:
     * not when {@code overrides} name the primary's or the replicas' data sources), and
     * {@code hibernate.hbm2ddl.auto=none}.
     * {@code overrides} win; an override whose value is {@code null} removes the setting.
     *
     * @return a new mutable map
     */
    public static Map<String, Object> settings(PostgresCluster cluster, Map<String, ?> overrides) {
        final Map<String, Object> settings = cluster.persistenceProperties();
        settings.put(RoutingSettings.HEALTH_CHECK_INTERVAL, "100ms");
        settings.put(RoutingSettings.CIRCUIT_BREAKER_OPEN_DURATION, "200ms");
        // Pool sizes only for pools the library builds: it refuses them for data sources it is given.
        if (PRIMARY_DATASOURCE_KEYS.stream().noneMatch(key -> overrides.get(key) != null)) {
            settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "5");
        }
        if (overrides.get(RoutingSettings.REPLICA_DATASOURCES) == null) {
            settings.put(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "5");
        }
        settings.put("hibernate.hbm2ddl.auto", "none");
        settings.putAll(overrides);
        settings.values().removeIf(v -> v == null);
        return settings;
    }

    /**
     * A persistence unit named {@code name} with the {@link #settings settings} for {@code cluster}
     * and {@code overrides}, and the given entity classes. While a {@link RoutingLeakCheck} runs the
     * current test class or test on this thread, it watches the new persistence unit's pools.
     */
    public static EntityManagerFactory emf(
            String name, PostgresCluster cluster, Map<String, ?> overrides, Class<?>... managedClasses) {
        final PersistenceConfiguration configuration = new PersistenceConfiguration(name);
        for (Class<?> managedClass : managedClasses) {
            configuration.managedClass(managedClass);
        }
        return emf(configuration, cluster, overrides);
    }

    /**
     * The persistence unit {@code configuration} describes (its name, classes, transaction type…),
     * with the {@link #settings settings} for {@code cluster} and {@code overrides} added. While a
     * {@link RoutingLeakCheck} runs the current test class or test on this thread, it watches the new
     * persistence unit's pools.
     */
    public static EntityManagerFactory emf(
            PersistenceConfiguration configuration, PostgresCluster cluster, Map<String, ?> overrides) {
        settings(cluster, overrides).forEach(configuration::property);
        final EntityManagerFactory emf = configuration.createEntityManagerFactory();
        RoutingLeakCheck.watchIfActive(emf);
        return emf;
    }

    /** The node that runs the next statement of this EntityManager, asked of the server itself ({@code inet_server_port()}). */
    public static Node servedBy(PostgresCluster cluster, EntityManager em) {
        final Number port =
                (Number) em.createNativeQuery("select inet_server_port()").getSingleResult();
        return cluster.nodeForPort(port.intValue());
    }

    /** Runs SQL on the primary directly, bypassing the library (for example to change data behind a replica's back). */
    public static void onPrimary(PostgresCluster cluster, String sql) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /**
     * The settings of a Redis marker at {@code uri} with a {@code window} shorter than the lag bound,
     * which the bootstrap refuses unless {@code allow_short_window} accepts it: for tests that watch
     * markers expire.
     */
    public static Map<String, Object> redisWithShortWindow(String uri, String window) {
        return Map.of(
                RoutingSettings.REDIS_URI,
                uri,
                RoutingSettings.REDIS_WINDOW,
                window,
                RoutingSettings.REDIS_ALLOW_SHORT_WINDOW,
                "true");
    }

    /** A single number queried on the primary directly, bypassing the library. */
    public static long longOnPrimary(PostgresCluster cluster, String sql) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The first column of the first row {@code sql} answers on the primary directly, bypassing the library; {@code null} for no row. */
    public static String stringOnPrimary(PostgresCluster cluster, String sql) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /** The number of rows of {@code table} on the primary, bypassing the library. */
    public static long countOnPrimary(PostgresCluster cluster, String table) throws SQLException {
        return longOnPrimary(cluster, "select count(*) from " + table);
    }

    /**
     * For assertion messages: each node as the persistence unit sees it (up, lag, reads, writes, pool) and its
     * latest 10 routing decisions (node and reason), newest first; {@code "routing off"} when routing is off.
     */
    public static String routingState(EntityManagerFactory emf) {
        final RoutingStatus status = RoutingStatus.of(emf);
        if (status == null) {
            return "routing off";
        }
        final List<RoutingStatus.Decision> decisions = status.decisions();
        return "nodes " + status.nodes() + "; latest decisions " + decisions.subList(0, Math.min(10, decisions.size()));
    }

    /**
     * Waits until the persistence unit reports every replica up (its health check answered and its
     * circuit breaker is closed), for example after a test stopped one; returns at once when routing
     * is off for {@code emf}.
     *
     * @throws AssertionError if a replica is not up within 30 s, naming each node's state
     */
    public static void awaitReplicasUp(EntityManagerFactory emf) {
        final long deadline = System.nanoTime() + REPLICAS_UP_TIMEOUT.toNanos();
        while (true) {
            final RoutingStatus status = RoutingStatus.of(emf);
            if (status == null || status.nodes().stream().allMatch(RoutingStatus.Node::up)) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("replicas not up after 30s: " + status.nodes());
            }
            sleep(20);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
