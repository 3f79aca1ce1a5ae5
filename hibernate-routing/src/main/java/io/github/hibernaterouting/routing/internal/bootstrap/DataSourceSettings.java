package io.github.hibernaterouting.routing.internal.bootstrap;

import static io.github.hibernaterouting.routing.RoutingSettings.REPLICA_DATASOURCES;
import static io.github.hibernaterouting.routing.RoutingSettings.REPLICA_URLS;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;
import org.hibernate.resource.transaction.spi.TransactionCoordinatorBuilder;

/**
 * Reads where connections come from when the application or its server supplies them: the
 * persistence unit's data source for the primary, {@code hibernate.routing.replica_datasources} for
 * the replicas, and whether transactions are JTA transactions; and refuses the combinations that
 * would run unsafely.
 */
final class DataSourceSettings {
    static final String TRANSACTION_COORDINATOR = "hibernate.transaction.coordinator_class";
    static final String TRANSACTION_TYPE = "jakarta.persistence.transactionType";

    private DataSourceSettings() {}

    /** The primary's data source: a {@code DataSource}, a JNDI name, or {@code null}. */
    static Object primary(Map<String, ?> settings, String[] keys) {
        for (String key : keys) {
            final Object value = settings.get(key);
            if (value instanceof DataSource) {
                return value;
            }
            if (value instanceof String name && !name.isBlank()) {
                return name.trim();
            }
            if (value != null && !(value instanceof String)) {
                throw new RoutingConfigurationException(
                        key, value.getClass().getName(), "a javax.sql.DataSource or the JNDI name of one");
            }
        }
        return null;
    }

    /** The replicas' data sources ({@code DataSource}s or JNDI names), in order; empty if none. */
    static List<Object> replicas(Map<String, ?> settings) {
        final Object value = settings.get(REPLICA_DATASOURCES);
        final List<Object> sources = new ArrayList<>();
        add(value, sources);
        return List.copyOf(sources);
    }

    private static void add(Object value, List<Object> sources) {
        if (value == null) {
            return;
        }
        if (value instanceof DataSource) {
            sources.add(value);
        } else if (value instanceof String names) {
            for (String name : names.split(",")) {
                if (!name.isBlank()) {
                    sources.add(name.trim());
                }
            }
        } else if (value instanceof Collection<?> collection) {
            collection.forEach(element -> add(element, sources));
        } else if (value instanceof Object[] array) {
            for (Object element : array) {
                add(element, sources);
            }
        } else {
            throw new RoutingConfigurationException(
                    REPLICA_DATASOURCES,
                    value.getClass().getName(),
                    "JNDI names (comma-separated), a javax.sql.DataSource, or a collection or array of them");
        }
    }

    /** Whether replicas are given as data sources, before anything else is validated. */
    static boolean replicasRequested(Map<String, ?> settings) {
        return !replicas(settings).isEmpty();
    }

    /** Whether the persistence unit's transactions are JTA transactions. */
    static boolean jta(Map<String, ?> settings) {
        final Object coordinator = settings.get(TRANSACTION_COORDINATOR);
        if (coordinator instanceof TransactionCoordinatorBuilder builder) {
            return builder.isJta();
        }
        if (coordinator instanceof Class<?> type) {
            return TransactionCoordinatorBuilder.class.isAssignableFrom(type)
                    && type.getSimpleName().toLowerCase(Locale.ROOT).contains("jta");
        }
        if (coordinator instanceof String name && !name.isBlank()) {
            final String lower = name.trim().toLowerCase(Locale.ROOT);
            return lower.equals("jta") || lower.contains("jtatransactioncoordinator");
        }
        final Object type = settings.get(TRANSACTION_TYPE);
        return type != null && type.toString().trim().equalsIgnoreCase("JTA");
    }

    /** A data source in words for logs and errors: its JNDI name, or its class; never its URL or credentials. */
    static String describe(Object source) {
        return source instanceof String name
                ? "jndi:" + name
                : "a " + source.getClass().getSimpleName();
    }

    /**
     * Refuses what would run unsafely or not at all.
     *
     * @throws RoutingConfigurationException naming the setting and the fix
     */
    static void check(RoutingConfig config, Map<String, ?> settings) {
        if (!config.replicaUrls.isEmpty() && !config.replicaDataSources.isEmpty()) {
            throw RoutingConfigurationException.withMessage(
                    REPLICA_DATASOURCES,
                    "Both '" + REPLICA_URLS + "' and '" + REPLICA_DATASOURCES + "' are set; name the replicas one way: "
                            + "URLs (the library pools their connections) or data sources (your server or framework does)");
        }
        if (config.routingEnabled() && config.primaryUrl == null && config.primaryDataSource == null) {
            throw RoutingConfigurationException.withMessage(
                    config.replicaDataSources.isEmpty() ? REPLICA_URLS : REPLICA_DATASOURCES,
                    "Replicas are configured but the persistence unit names no primary: give it a data source "
                            + "(<jta-data-source> or <non-jta-data-source> in persistence.xml, or 'hibernate.connection.datasource'), "
                            + "or set 'jakarta.persistence.jdbc.url' (or 'hibernate.connection.url') to the primary's JDBC URL");
        }
        if (config.routingEnabled() && config.jta && config.primaryDataSource == null) {
            throw RoutingConfigurationException.withMessage(
                    "jakarta.persistence.jdbc.url",
                    "The persistence unit uses JTA transactions but its primary is a JDBC URL: writes through a pool "
                            + "the library builds would not join the JTA transaction, so a rollback would not undo them. "
                            + "Give the persistence unit its JTA data source (<jta-data-source> in persistence.xml, or "
                            + "'jakarta.persistence.jtaDataSource'), or use transaction-type RESOURCE_LOCAL");
        }
        if (config.routingEnabled() && config.primaryDataSource != null) {
            refusePoolSettings(settings, PRIMARY_POOL_PREFIX, "the primary comes from a data source");
        }
        if (!config.replicaDataSources.isEmpty()) {
            refusePoolSettings(settings, REPLICA_POOL_PREFIX, "the replicas come from data sources");
        }
    }

    private static final String PRIMARY_POOL_PREFIX = "hibernate.routing.primary.";
    private static final String REPLICA_POOL_PREFIX = "hibernate.routing.replica.";

    /**
     * A setting of a pool the library does not build would do nothing: refused, so that nobody
     * believes the replicas fail over within a {@code replica.connection_timeout} they never got.
     */
    private static void refusePoolSettings(Map<String, ?> settings, String prefix, String why) {
        for (String key : settings.keySet()) {
            if (key.startsWith(prefix) && settings.get(key) != null) {
                throw RoutingConfigurationException.withMessage(
                        key,
                        "'" + key + "' has no effect: " + why + ", so the library builds no pool for it. "
                                + "Remove it, and size that pool (and its connection timeout) where the data source is defined");
            }
        }
    }
}
