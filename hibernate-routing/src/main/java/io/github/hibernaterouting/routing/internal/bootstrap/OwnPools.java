package io.github.hibernaterouting.routing.internal.bootstrap;

import com.zaxxer.hikari.HikariConfig;
import io.github.hibernaterouting.routing.internal.jdbc.JdbcRouting;
import io.micrometer.core.instrument.Metrics;
import java.sql.Connection;

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
