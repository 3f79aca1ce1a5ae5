package io.github.hibernaterouting.routing.internal.bootstrap;

import static org.hibernate.cfg.MultiTenancySettings.MULTI_TENANT_CONNECTION_PROVIDER;
import static org.hibernate.cfg.MultiTenancySettings.MULTI_TENANT_IDENTIFIER_RESOLVER;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.internal.cache.RoutingRegionFactoryInitiator;
import java.util.Map;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.service.spi.ServiceContributor;

/**
 * Switches routing on when the persistence unit names replicas, with no other setting needed:
 * installs {@link RoutingConnectionProvider} and {@link RoutingTenantResolver}, and wraps the
 * second-level cache provider, if caching is on, so that its caches stay one view whichever server
 * a session uses ({@code RoutingRegionFactory}).
 *
 * <p>Found by Hibernate through {@code META-INF/services/org.hibernate.service.spi.ServiceContributor}.
 * Without {@code hibernate.routing.replica_urls} (or with only the primary's URL there) it does
 * nothing, and Hibernate runs exactly as it would without the library. All settings are validated
 * here, so a bad one fails the bootstrap; so does an unknown {@code hibernate.routing.*} key, also
 * while routing is off ({@link SettingKeys}).
 */
public final class RoutingServiceContributor implements ServiceContributor {
    @Override
    public void contribute(StandardServiceRegistryBuilder builder) {
        final Map<String, Object> settings = builder.getSettings();
        // Before anything else: a misspelled replica_urls would switch routing off without a word.
        SettingKeys.requireKnown(settings);
        if (!RoutingConfig.routingRequested(settings, System::getenv)) {
            return;
        }
        final RoutingConfig config = RoutingConfig.from(settings, System::getenv);
        requireAbsentOr(settings, MULTI_TENANT_CONNECTION_PROVIDER, RoutingConnectionProvider.class);
        requireAbsentOr(settings, MULTI_TENANT_IDENTIFIER_RESOLVER, RoutingTenantResolver.class);
        builder.applySetting(MULTI_TENANT_CONNECTION_PROVIDER, new RoutingConnectionProvider(config));
        builder.applySetting(MULTI_TENANT_IDENTIFIER_RESOLVER, new RoutingTenantResolver(config.strategy));
        // Added after Hibernate's own initiators, so it replaces the standard one for RegionFactory.
        builder.addInitiator(new RoutingRegionFactoryInitiator());
    }

    private static void requireAbsentOr(Map<String, Object> settings, String key, Class<?> ours) {
        final Object value = settings.get(key);
        if (value == null
                || ours.isInstance(value)
                || value == ours
                || value instanceof String name
                        && (name.isBlank() || name.trim().equals(ours.getName()))) {
            return;
        }
        final String named = value instanceof Class<?> type
                ? type.getName()
                : value instanceof String ? value.toString() : value.getClass().getName();
        throw RoutingConfigurationException.withMessage(
                key,
                "'" + key + "' names " + named + ", but hibernate-routing uses the connection "
                        + "identifiers itself (\"primary\" and \"replica\") and cannot be combined with database multi-tenancy. "
                        + "Remove '" + key + "', or remove 'hibernate.routing.replica_urls' to switch routing off");
    }
}
