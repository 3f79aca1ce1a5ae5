package io.github.hibernaterouting.routing.internal.bootstrap;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.replicas.BusyPools;
import io.github.hibernaterouting.routing.internal.replicas.ServerProbe;
import io.github.hibernaterouting.routing.sql.internal.Masking;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the persistence unit's connections come from: for the primary and each replica, either a
 * pool the library builds from a URL ({@link OwnPools}) or a data source the application, its
 * framework or its server supplies (an object, or a JNDI name looked up once at start). The library
 * closes only the pools it built.
 *
 * <p>Each server also gets the library's own connection for health checks ({@link ServerProbe}), so
 * that an application holding every connection of a pool never keeps the library from learning where
 * the server is. For a pool the library builds, and for a supplied HikariCP pool configured with a
 * JDBC URL, that is a connection of its own with the pool's URL, credentials and properties, outside
 * the pool. Any other supplied data source is the only way to the server the library may use: the
 * check borrows one connection from it and keeps it, borrowing again only after it failed.
 */
final class ConnectionSources implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionSources.class);

    /** One replica's connections, and how logs and errors name it. */
    record Replica(String description, DataSource dataSource, boolean supplied, ServerProbe probe) {}

    private final DataSource primary;
    private final String primaryDescription;
    private final ServerProbe primaryProbe;
    private final List<Replica> replicas;
    private final List<HikariDataSource> owned;

    private ConnectionSources(
            DataSource primary,
            String primaryDescription,
            ServerProbe primaryProbe,
            List<Replica> replicas,
            List<HikariDataSource> owned) {
        this.primary = primary;
        this.primaryDescription = primaryDescription;
        this.primaryProbe = primaryProbe;
        this.replicas = List.copyOf(replicas);
        this.owned = List.copyOf(owned);
    }

    /**
     * The connection sources {@code config} names, built or looked up now.
     *
     * @param jndi looks a JNDI name up (Hibernate's JNDI service)
     * @throws RoutingConfigurationException if a name does not resolve to a {@code DataSource}
     */
    static ConnectionSources open(RoutingConfig config, Function<String, Object> jndi) {
        final List<HikariDataSource> owned = new ArrayList<>();
        try {
            final DataSource primary;
            final String primaryDescription;
            final ServerProbe primaryProbe;
            if (config.primaryDataSource != null) {
                primary = resolve(config.primaryDataSource, "hibernate.connection.datasource", jndi);
                primaryDescription = DataSourceSettings.describe(config.primaryDataSource);
                primaryProbe = probe(primary);
            } else {
                final HikariConfig primaryConfig = OwnPools.primary(config);
                final HikariDataSource pool = new HikariDataSource(primaryConfig);
                owned.add(pool);
                primary = pool;
                primaryDescription = Masking.url(config.primaryUrl);
                // The running pool, not the configuration it was built from: credentials changed
                // through its MXBean reach the probe too.
                primaryProbe = OwnPools.probe(pool);
            }
            final List<Replica> replicas = new ArrayList<>();
            for (Object source : config.replicaDataSources) {
                final DataSource dataSource = resolve(source, RoutingSettings.REPLICA_DATASOURCES, jndi);
                replicas.add(new Replica(DataSourceSettings.describe(source), dataSource, true, probe(dataSource)));
            }
            for (int i = 0; i < config.replicaUrls.size(); i++) {
                final HikariConfig replicaConfig = OwnPools.replica(config, i);
                final HikariDataSource pool = new HikariDataSource(replicaConfig);
                owned.add(pool);
                replicas.add(new Replica(Masking.url(config.replicaUrls.get(i)), pool, false, OwnPools.probe(pool)));
            }
            return new ConnectionSources(primary, primaryDescription, primaryProbe, replicas, owned);
        } catch (RuntimeException e) {
            owned.forEach(HikariDataSource::close);
            throw e;
        }
    }

    private static DataSource resolve(Object source, String key, Function<String, Object> jndi) {
        if (source instanceof DataSource dataSource) {
            return dataSource;
        }
        final String name = (String) source;
        final Object found;
        try {
            found = jndi.apply(name);
        } catch (RuntimeException e) {
            throw RoutingConfigurationException.withMessage(
                    key,
                    "Could not look up the data source '" + name + "' named in '" + key + "' in JNDI: " + e.getMessage()
                            + ". Check the name, and that it is bound where the application runs");
        }
        if (!(found instanceof DataSource dataSource)) {
            throw RoutingConfigurationException.withMessage(
                    key,
                    "The JNDI name '" + name + "' in '" + key + "' is bound to "
                            + (found == null
                                    ? "nothing"
                                    : "a " + found.getClass().getName())
                            + ", not a javax.sql.DataSource");
        }
        return dataSource;
    }

    /**
     * The health check's connection to a server whose connections come from {@code source}, a data
     * source the application supplies: its own, if {@code source} is a HikariCP pool with a JDBC URL
     * (the pool's URL, credentials and properties); otherwise one connection borrowed from
     * {@code source} and kept, because the library may not reach the server any other way.
     */
    static ServerProbe probe(DataSource source) {
        final HikariDataSource hikari = hikari(source);
        if (hikari != null && hikari.getJdbcUrl() != null) {
            return OwnPools.probe(hikari);
        }
        return new ServerProbe(source::getConnection, OwnPools.PROBE_QUERY_TIMEOUT_SECONDS, null);
    }

    /** The health check's connection to the primary. */
    ServerProbe primaryProbe() {
        return primaryProbe;
    }

    /** Where primary connections come from. */
    DataSource primary() {
        return primary;
    }

    /** The primary's pool if the library built it, {@code null} if the application supplies the data source. */
    HikariDataSource ownPrimaryPool() {
        return primary instanceof HikariDataSource pool && owned.contains(pool) ? pool : null;
    }

    /** The primary in words: its masked URL, or its data source's JNDI name or class. */
    String primaryDescription() {
        return primaryDescription;
    }

    /** The replicas, in configuration order. */
    List<Replica> replicas() {
        return replicas;
    }

    /**
     * Figures of the HikariCP pool behind {@code source}, whoever built it (the library, or a
     * framework such as Spring Boot), or {@code null} when it is not HikariCP.
     */
    static HikariDataSource hikari(DataSource source) {
        return BusyPools.hikari(source);
    }

    /** {active, idle, maximum} connections of {@code source}'s HikariCP pool, or {@code null}. */
    static int[] poolFigures(DataSource source) {
        final HikariDataSource pool = hikari(source);
        if (pool == null) {
            return null;
        }
        final HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        return new int[] {
            bean == null ? 0 : bean.getActiveConnections(),
            bean == null ? 0 : bean.getIdleConnections(),
            pool.getMaximumPoolSize()
        };
    }

    /** Closes the pools the library built; replicas first, so an in-flight read cannot fall back to a closed primary. */
    @Override
    public void close() {
        // Closing twice (the monitor closes them too) is harmless.
        for (Replica replica : replicas) {
            replica.probe().close();
        }
        primaryProbe.close();
        for (int i = owned.size() - 1; i >= 0; i--) {
            final HikariDataSource pool = owned.get(i);
            try {
                pool.close();
            } catch (RuntimeException e) {
                LOG.warn("Closing pool {} failed", pool.getPoolName(), e);
            }
        }
    }
}
