package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.github.hibernaterouting.routing.ReplicaUrls;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/** Builds the replica pools from the properties. */
final class ReplicaPools {
    /** The library's environment variables, which it documents as the fallback of its replica settings. */
    static final String ENV_REPLICA_URLS = "HIBERNATE_ROUTING_REPLICA_URLS";

    static final String ENV_REPLICA_USER = "HIBERNATE_ROUTING_REPLICA_USER";
    static final String ENV_REPLICA_PASSWORD = "HIBERNATE_ROUTING_REPLICA_PASSWORD";

    private ReplicaPools() {}

    /**
     * One HikariCP pool per replica.
     *
     * @param environment the application's environment, for the library's variables
     * @param primaryUser the primary's user, the default of the replicas'; may be {@code null}
     * @param primaryPassword the primary's password, likewise
     * @param registry where the pools' meters go, or {@code null}
     * @throws RoutingConfigurationException naming the property when the replicas are given twice or a URL is missing
     */
    static RoutingReplicaDataSources build(
            HibernateRoutingProperties properties,
            UnaryOperator<String> environment,
            String primaryUser,
            String primaryPassword,
            MeterRegistry registry) {
        final List<HibernateRoutingProperties.Replica> replicas = replicas(properties, environment);
        // Where the URLs came from, for messages: the list, the library's environment variable, or replicas[n].
        final String listedIn = !properties.getReplicaUrls().isEmpty()
                ? "hibernate.routing.replica_urls"
                : properties.getReplicas().isEmpty() ? ENV_REPLICA_URLS : null;
        final String replicaUser = properties.getReplicaUser() != null
                ? properties.getReplicaUser()
                : orElse(environment.apply(ENV_REPLICA_USER), primaryUser);
        final String replicaPassword = properties.getReplicaPassword() != null
                ? properties.getReplicaPassword()
                : orElse(environment.apply(ENV_REPLICA_PASSWORD), primaryPassword);
        final List<HikariDataSource> pools = new ArrayList<>();
        try {
            for (int i = 0; i < replicas.size(); i++) {
                pools.add(pool(replicas.get(i), i, listedIn, replicaUser, replicaPassword, registry));
            }
        } catch (RuntimeException e) {
            pools.forEach(HikariDataSource::close);
            throw e;
        }
        return new RoutingReplicaDataSources(pools);
    }

    private static String orElse(String value, String fallback) {
        return value != null ? value : fallback;
    }

    private static List<HibernateRoutingProperties.Replica> replicas(
            HibernateRoutingProperties properties, UnaryOperator<String> environment) {
        final String fromEnvironment = environment.apply(ENV_REPLICA_URLS);
        final List<String> configured = !properties.getReplicaUrls().isEmpty()
                        || !properties.getReplicas().isEmpty()
                        || fromEnvironment == null
                ? properties.getReplicaUrls()
                : List.of(fromEnvironment.split(","));
        final List<String> urls = configured.stream()
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

    /**
     * @param listedIn the property or environment variable that listed the replica's URL, or {@code null}
     *     for {@code replicas[n]}
     */
    private static HikariDataSource pool(
            HibernateRoutingProperties.Replica replica,
            int index,
            String listedIn,
            String defaultUser,
            String defaultPassword,
            MeterRegistry registry) {
        final String key = listedIn != null
                ? listedIn
                : replica.getUrl() != null
                        ? "hibernate.routing.replicas[" + index + "].url"
                        : "hibernate.routing.replicas[" + index + "].hikari.jdbc-url";
        final String given = replica.getUrl() != null
                ? replica.getUrl()
                : replica.getHikari().getJdbcUrl();
        if (given == null || given.isBlank()) {
            throw new RoutingConfigurationException(
                    "hibernate.routing.replicas[" + index + "].url", "", "the JDBC URL of the replica");
        }
        // The library's own checks, before HikariCP sees the URL: it would log a URL's user-info, password
        // included, and answer a wrong prefix with "No suitable driver".
        final String url = ReplicaUrls.check(key, given, ReplicaUrls.EXPECTED);
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
