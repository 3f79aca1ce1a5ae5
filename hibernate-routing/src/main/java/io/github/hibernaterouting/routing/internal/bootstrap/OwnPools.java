package io.github.hibernaterouting.routing.internal.bootstrap;

import com.zaxxer.hikari.HikariConfig;
import io.github.hibernaterouting.routing.internal.jdbc.JdbcRouting;

/** The library's own HikariCP pools, built from the configuration. */
final class OwnPools {
    private OwnPools() {}

    static HikariConfig primary(RoutingConfig config) {
        return pool(
                "hibernate-routing-primary",
                config.primaryUrl,
                config.primaryUser,
                config.primaryPassword,
                config.primaryPool,
                false);
    }

    static HikariConfig replica(RoutingConfig config, int index) {
        return pool(
                "hibernate-routing-replica" + (index + 1),
                config.replicaUrls.get(index),
                config.replicaUser,
                config.replicaPassword,
                config.replicaPool,
                true);
    }

    private static HikariConfig pool(
            String name, String url, String user, String password, RoutingConfig.PoolConfig pool, boolean replica) {
        final HikariConfig hikari = new HikariConfig();
        hikari.setPoolName(name);
        hikari.setJdbcUrl(url);
        hikari.setUsername(user);
        hikari.setPassword(password);
        hikari.setMaximumPoolSize(pool.maximumPoolSize());
        hikari.setMinimumIdle(pool.minimumIdle());
        hikari.setConnectionTimeout(pool.connectionTimeout().toMillis());
        if (replica) {
            // Defence in depth: even a routing bug cannot write through a replica connection, in
            // auto-commit mode or in a transaction. The session default is set once per physical
            // connection; pgjdbc's readOnlyMode=always would instead send a SET SESSION CHARACTERISTICS
            // round trip at every auto-commit switch, twice per transaction.
            hikari.setReadOnly(true);
            hikari.setConnectionInitSql(JdbcRouting.READ_ONLY_SESSION);
            // A replica that is down at startup must not stop the application: the failure policy applies.
            hikari.setInitializationFailTimeout(-1);
        }
        return hikari;
    }
}
