package io.github.hibernaterouting.routing.internal.bootstrap;

import com.zaxxer.hikari.HikariConfig;
import io.github.hibernaterouting.routing.internal.jdbc.JdbcRouting;
import io.github.hibernaterouting.routing.internal.replicas.ServerProbe;
import io.micrometer.core.instrument.Metrics;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/**
 * The library's own HikariCP pools, built from the configuration: Hibernate's connection settings
 * that apply to them ({@link ConnectionSettings}) first, then what each pool needs.
 */
final class OwnPools {
    private OwnPools() {}

    static HikariConfig primary(RoutingConfig config) {
        final HikariConfig hikari = pool(
                config, "primary", config.primaryUrl, config.primaryUser, config.primaryPassword, config.primaryPool);
        if (config.connection.isolation != null) {
            hikari.setTransactionIsolation(isolationName(config.connection.isolation));
        }
        if (config.connection.initSql != null) {
            hikari.setConnectionInitSql(config.connection.initSql);
        }
        if (config.connection.initializationFailTimeout != null) {
            hikari.setInitializationFailTimeout(config.connection.initializationFailTimeout);
        }
        return hikari;
    }

    static HikariConfig replica(RoutingConfig config, int index) {
        final HikariConfig hikari = pool(
                config,
                "replica" + (index + 1),
                config.replicaUrls.get(index),
                config.replicaUser,
                config.replicaPassword,
                config.replicaPool);
        final Integer isolation = config.connection.isolation;
        if (isolation != null && isolation != Connection.TRANSACTION_SERIALIZABLE) {
            // A standby refuses SERIALIZABLE; the reads of a SERIALIZABLE unit of work go to the primary,
            // and the replica keeps its default for the health check and everything else.
            hikari.setTransactionIsolation(isolationName(isolation));
        }
        // Defence in depth: even a routing bug cannot write through a replica connection, in
        // auto-commit mode or in a transaction. The session default is set once per physical
        // connection; pgjdbc's readOnlyMode=always would instead send a SET SESSION CHARACTERISTICS
        // round trip at every auto-commit switch, twice per transaction.
        hikari.setReadOnly(true);
        hikari.setConnectionInitSql(
                config.connection.initSql == null
                        ? JdbcRouting.READ_ONLY_SESSION
                        : JdbcRouting.READ_ONLY_SESSION + "; " + config.connection.initSql);
        // A replica that is down at startup must not stop the application: the failure policy applies.
        hikari.setInitializationFailTimeout(-1);
        return hikari;
    }

    private static HikariConfig pool(
            RoutingConfig config,
            String name,
            String url,
            String user,
            String password,
            RoutingConfig.PoolConfig pool) {
        final HikariConfig hikari = new HikariConfig();
        config.connection.applyTo(hikari);
        hikari.setPoolName(
                (config.connection.poolName == null ? "hibernate-routing" : config.connection.poolName) + "-" + name);
        hikari.setJdbcUrl(url);
        hikari.setUsername(user);
        hikari.setPassword(password);
        hikari.setMaximumPoolSize(pool.maximumPoolSize());
        hikari.setMinimumIdle(pool.minimumIdle());
        hikari.setConnectionTimeout(pool.connectionTimeout().toMillis());
        pool.tuning().applyTo(hikari);
        if (hikari.getMetricRegistry() == null && hikari.getMetricsTrackerFactory() == null) {
            // HikariCP's own meters (hikaricp.connections.*, tagged with the pool's name) in the library's registry.
            hikari.setMetricRegistry(config.meterRegistry != null ? config.meterRegistry : Metrics.globalRegistry);
        }
        return hikari;
    }

    /**
     * The library's own connection to the server of {@code pool}, for the health check and the LSN
     * gate: the pool's URL, credentials, driver and driver properties, with a connect timeout and a
     * socket timeout of their own unless the configuration set them, outside the pool. {@code pool}
     * may be a pool the application supplies ({@code HikariDataSource} is a {@code HikariConfig}).
     * Credentials are read from {@code pool} each time the probe connects, so a password changed at
     * run time through the pool's {@code HikariConfigMXBean} (rotated credentials) reaches the probe
     * as it reaches the pool's next connection.
     */
    static ServerProbe probe(HikariConfig pool) {
        final String url = pool.getJdbcUrl();
        final String driverClass = pool.getDriverClassName();
        return new ServerProbe(
                () -> {
                    final Connection connection = driver(driverClass, url).connect(url, probeProperties(pool));
                    if (connection == null) {
                        throw new SQLException(
                                "The JDBC driver does not accept " + pool.getPoolName() + "'s URL", "08001");
                    }
                    return connection;
                },
                PROBE_QUERY_TIMEOUT_SECONDS,
                pool.getUsername());
    }

    /** The driver properties of a probe connection to {@code pool}'s server, with the pool's current credentials. */
    static Properties probeProperties(HikariConfig pool) {
        final Properties properties = new Properties();
        properties.putAll(pool.getDataSourceProperties());
        final String user = pool.getUsername();
        if (user != null) {
            properties.setProperty("user", user);
        }
        final String password = pool.getPassword();
        if (password != null) {
            properties.setProperty("password", password);
        }
        properties.putIfAbsent("connectTimeout", String.valueOf(PROBE_CONNECT_TIMEOUT_SECONDS));
        // A server that stops answering without closing the connection: the query timeout's cancel
        // request may not reach it either.
        properties.putIfAbsent("socketTimeout", String.valueOf(PROBE_SOCKET_TIMEOUT_SECONDS));
        properties.putIfAbsent("ApplicationName", "hibernate-routing health check");
        return properties;
    }

    private static final int PROBE_CONNECT_TIMEOUT_SECONDS = 2;
    static final int PROBE_QUERY_TIMEOUT_SECONDS = 2;
    private static final int PROBE_SOCKET_TIMEOUT_SECONDS = 10;

    private static Driver driver(String driverClass, String url) throws SQLException {
        if (driverClass == null) {
            return DriverManager.getDriver(url);
        }
        try {
            final ClassLoader loader = Thread.currentThread().getContextClassLoader();
            return (Driver) Class.forName(driverClass, true, loader != null ? loader : OwnPools.class.getClassLoader())
                    .getDeclaredConstructor()
                    .newInstance();
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new SQLException("Cannot load the JDBC driver " + driverClass + ": " + e, "08001", e);
        }
    }

    /** HikariCP's name of a JDBC isolation level. */
    private static String isolationName(int level) {
        return switch (level) {
            case Connection.TRANSACTION_READ_UNCOMMITTED -> "TRANSACTION_READ_UNCOMMITTED";
            case Connection.TRANSACTION_READ_COMMITTED -> "TRANSACTION_READ_COMMITTED";
            case Connection.TRANSACTION_REPEATABLE_READ -> "TRANSACTION_REPEATABLE_READ";
            default -> "TRANSACTION_SERIALIZABLE";
        };
    }
}
