package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;

/** Builds the replica pools from the properties. */
final class ReplicaPools {
    private ReplicaPools() {}

    /**
     * One HikariCP pool per replica.
     *
     * @param primaryUser the primary's user, the default of the replicas'; may be {@code null}
     * @param primaryPassword the primary's password, likewise
     * @param registry where the pools' meters go, or {@code null}
     * @throws RoutingConfigurationException naming the property when the replicas are given twice or a URL is missing
     */
    static RoutingReplicaDataSources build(
            HibernateRoutingProperties properties, String primaryUser, String primaryPassword, MeterRegistry registry) {
        final List<HibernateRoutingProperties.Replica> replicas = replicas(properties);
        final List<HikariDataSource> pools = new ArrayList<>();
        try {
            for (int i = 0; i < replicas.size(); i++) {
                pools.add(pool(
                        replicas.get(i),
                        i,
                        properties.getReplicaUser() != null ? properties.getReplicaUser() : primaryUser,
                        properties.getReplicaPassword() != null ? properties.getReplicaPassword() : primaryPassword,
                        registry));
            }
        } catch (RuntimeException e) {
            pools.forEach(HikariDataSource::close);
            throw e;
        }
        return new RoutingReplicaDataSources(pools);
    }

    private static List<HibernateRoutingProperties.Replica> replicas(HibernateRoutingProperties properties) {
        final List<String> urls = properties.getReplicaUrls().stream()
                .map(String::strip)
                .filter(url -> !url.isEmpty())
                .toList();
        if (!urls.isEmpty() && !properties.getReplicas().isEmpty()) {
            throw new RoutingConfigurationException(
                    "hibernate.routing.replica_urls",
                    "(not shown)",
                    "either hibernate.routing.replica_urls or hibernate.routing.replicas[n].url, not both");
        }
        if (urls.isEmpty()) {
            return properties.getReplicas();
        }
        final List<HibernateRoutingProperties.Replica> replicas = new ArrayList<>();
        for (String url : urls) {
            final HibernateRoutingProperties.Replica replica = new HibernateRoutingProperties.Replica();
            replica.setUrl(url);
            replicas.add(replica);
        }
        return replicas;
    }

    private static HikariDataSource pool(
            HibernateRoutingProperties.Replica replica,
            int index,
            String defaultUser,
            String defaultPassword,
            MeterRegistry registry) {
        final String url = replica.getUrl() != null
                ? replica.getUrl()
                : replica.getHikari().getJdbcUrl();
        if (url == null || url.isBlank()) {
            throw new RoutingConfigurationException(
                    "hibernate.routing.replicas[" + index + "].url", "", "the JDBC URL of the replica");
        }
        final HikariConfig config = replica.getHikari();
        config.setJdbcUrl(url);
        if (replica.getUsername() != null) {
            config.setUsername(replica.getUsername());
        } else if (config.getUsername() == null) {
            config.setUsername(defaultUser);
        }
        if (replica.getPassword() != null) {
            config.setPassword(replica.getPassword());
        } else if (config.getPassword() == null) {
            config.setPassword(defaultPassword);
        }
        if (replica.getDriverClassName() != null) {
            config.setDriverClassName(replica.getDriverClassName());
        }
        if (config.getPoolName() == null) {
            config.setPoolName("hibernate-routing-replica" + (index + 1));
        }
        if (registry != null && config.getMetricsTrackerFactory() == null && config.getMetricRegistry() == null) {
            // What Spring Boot does for its own HikariCP pools: hikaricp.connections.* meters tagged with the pool
            // name.
            config.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry));
        }
        return new HikariDataSource(config);
    }
}
