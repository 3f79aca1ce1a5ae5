package io.github.hibernaterouting.routing.quarkus.runtime;

import io.agroal.api.AgroalDataSource;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.bootstrap.RoutingConnectionProvider;
import io.github.hibernaterouting.routing.internal.cache.RoutingRegionFactoryInitiator;
import io.github.hibernaterouting.routing.servlet.internal.EndpointRules;
import io.quarkus.agroal.runtime.AgroalDataSourceUtil;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ClientProxy;
import io.quarkus.arc.InstanceHandle;
import io.quarkus.hibernate.orm.runtime.integration.HibernateOrmIntegrationRuntimeInitListener;
import io.quarkus.hibernate.orm.runtime.service.QuarkusRegionFactoryInitiator;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.hibernate.boot.registry.StandardServiceInitiator;
import org.hibernate.cfg.MultiTenancySettings;
import org.jboss.logging.Logger;

/**
 * Puts the library into the persistence unit when Quarkus starts it: the replicas, the library's settings, the
 * meter registry and the library's {@code MultiTenantConnectionProvider}; and wraps Quarkus' second-level cache
 * provider so that its caches stay one view whichever server a session uses.
 */
final class RoutingRuntimeInitListener implements HibernateOrmIntegrationRuntimeInitListener {
    private static final Logger LOG = Logger.getLogger(RoutingRuntimeInitListener.class);
    static final String METER_REGISTRY_CLASS = "io.micrometer.core.instrument.MeterRegistry";

    private final HibernateRoutingConfig config;
    private final String persistenceUnit;
    private volatile boolean routing;

    RoutingRuntimeInitListener(HibernateRoutingConfig config, String persistenceUnit) {
        this.config = config;
        this.persistenceUnit = persistenceUnit;
    }

    @Override
    public void contributeRuntimeProperties(BiConsumer<String, Object> properties) {
        final Map<String, Object> settings = QuarkusSettings.from(config);
        final Config mp = ConfigProvider.getConfig();
        final List<String> names = config.replicaDatasources().orElse(List.of()).stream()
                .map(String::strip)
                .filter(name -> !name.isEmpty())
                .toList();
        final List<String> urls = config.replicaUrls().orElse(List.of()).stream()
                .map(String::strip)
                .filter(url -> !url.isEmpty())
                .toList();
        if (!names.isEmpty() && !urls.isEmpty()) {
            throw RoutingConfigurationException.withMessage(
                    QuarkusSettings.ROOT + "replica-urls",
                    "Both " + QuarkusSettings.ROOT + "replica-datasources and " + QuarkusSettings.ROOT
                            + "replica-urls are set: give the replicas one way, as named datasources or as URLs");
        }
        final String environmentUrls = System.getenv("HIBERNATE_ROUTING_REPLICA_URLS");
        if (names.isEmpty() && urls.isEmpty() && (environmentUrls == null || environmentUrls.isBlank())) {
            LOG.infof(
                    "hibernate-routing: no replicas for persistence unit %s (%sreplica-datasources or %sreplica-urls):"
                            + " routing is off, Hibernate ORM runs as without the extension",
                    persistenceUnit, QuarkusSettings.ROOT, QuarkusSettings.ROOT);
            return;
        }
        config.web().rules().ifPresent(RoutingRuntimeInitListener::checkRules);
        settings.forEach(properties);
        if (!names.isEmpty()) {
            properties.accept(RoutingSettings.REPLICA_DATASOURCES, replicaDataSources(names, mp));
            // Present and empty, so that the library does not read HIBERNATE_ROUTING_REPLICA_URLS besides them.
            properties.accept(RoutingSettings.REPLICA_URLS, "");
        } else {
            if (!urls.isEmpty()) {
                properties.accept(RoutingSettings.REPLICA_URLS, String.join(",", urls));
            }
            properties.accept(
                    RoutingSettings.REPLICA_USER,
                    config.replicaUsername()
                            .or(() -> mp.getOptionalValue("quarkus.datasource.username", String.class))
                            .orElse(null));
            final Optional<String> password =
                    config.replicaPassword().or(() -> mp.getOptionalValue("quarkus.datasource.password", String.class));
            password.ifPresent(value -> properties.accept(RoutingSettings.REPLICA_PASSWORD, value));
        }
        final Object registry = meterRegistry();
        if (registry != null) {
            properties.accept(RoutingSettings.METER_REGISTRY, registry);
        }
        final RoutingConnectionProvider provider = new RoutingConnectionProvider();
        RoutedUnit.provider(provider);
        properties.accept(MultiTenancySettings.MULTI_TENANT_CONNECTION_PROVIDER, provider);
        routing = true;
    }

    @Override
    public List<StandardServiceInitiator<?>> contributeServiceInitiators() {
        return routing ? List.of(new RoutingRegionFactoryInitiator(QuarkusRegionFactoryInitiator.INSTANCE)) : List.of();
    }

    private static List<DataSource> replicaDataSources(List<String> names, Config mp) {
        final List<DataSource> dataSources = new ArrayList<>();
        for (String name : names) {
            final String prefix = "quarkus.datasource.\"" + name + "\".";
            if (mp.getOptionalValue(prefix + "db-kind", String.class).isEmpty()
                    && mp.getOptionalValue(prefix + "jdbc.url", String.class).isEmpty()) {
                throw RoutingConfigurationException.withMessage(
                        QuarkusSettings.ROOT + "replica-datasources",
                        "No datasource named '" + name + "' (" + QuarkusSettings.ROOT
                                + "replica-datasources): define it" + " with " + prefix + "db-kind=postgresql and "
                                + prefix + "jdbc.url");
            }
            final String transactions = mp.getOptionalValue(prefix + "jdbc.transactions", String.class)
                    .orElse("enabled");
            if (!"disabled".equals(transactions.strip().toLowerCase(Locale.ROOT))) {
                throw RoutingConfigurationException.withMessage(
                        prefix + "jdbc.transactions",
                        "The replica datasource '" + name + "' joins JTA transactions (" + prefix
                                + "jdbc.transactions=" + transactions + "), so a transaction's replica reads would"
                                + " hold a second XA branch and commit with it: set " + prefix
                                + "jdbc.transactions=disabled");
            }
            if (!mp.getOptionalValue(prefix + "health-exclude", Boolean.class).orElse(false)) {
                LOG.warnf(
                        "The replica datasource '%s' is in Quarkus' datasource health check, which makes readiness DOWN"
                                + " while it is unreachable although the library reads elsewhere: set %shealth-exclude=true"
                                + " (the extension's own check reports the replicas)",
                        name, prefix);
            }
            final AgroalDataSource dataSource;
            try {
                dataSource = ClientProxy.unwrap(
                        AgroalDataSourceUtil.dataSourceInstance(name).get());
            } catch (RuntimeException e) {
                throw RoutingConfigurationException.withMessage(
                        QuarkusSettings.ROOT + "replica-datasources",
                        "The replica datasource '" + name + "' is not available: " + e.getMessage());
            }
            dataSources.add(dataSource);
        }
        return dataSources;
    }

    /** The endpoint rules, checked at the start rather than at the first request. */
    private static void checkRules(String rules) {
        try {
            EndpointRules.parse(rules);
        } catch (RuntimeException e) {
            throw RoutingConfigurationException.withMessage(
                    QuarkusSettings.ROOT + "web.rules",
                    "Invalid " + QuarkusSettings.ROOT + "web.rules: " + e.getMessage());
        }
    }

    /** quarkus-micrometer's registry, when the application has it. */
    private static Object meterRegistry() {
        final Class<?> type;
        try {
            type = Class.forName(
                    METER_REGISTRY_CLASS, false, Thread.currentThread().getContextClassLoader());
        } catch (ClassNotFoundException e) {
            return null;
        }
        try (InstanceHandle<?> handle = Arc.container().instance(type)) {
            return handle.isAvailable() ? ClientProxy.unwrap(handle.get()) : null;
        }
    }
}
