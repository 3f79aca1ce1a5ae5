package io.github.hibernaterouting.routing.internal.cache;

import java.util.Map;
import org.hibernate.boot.registry.StandardServiceInitiator;
import org.hibernate.cache.internal.NoCachingRegionFactory;
import org.hibernate.cache.internal.RegionFactoryInitiator;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.service.spi.ServiceRegistryImplementor;

/**
 * Builds the cache provider Hibernate would build ({@link RegionFactoryInitiator}, from the same
 * settings) and wraps it in a {@link RoutingRegionFactory}, unless caching is off. Contributed only
 * while routing is on.
 */
public final class RoutingRegionFactoryInitiator implements StandardServiceInitiator<RegionFactory> {
    @Override
    public Class<RegionFactory> getServiceInitiated() {
        return RegionFactory.class;
    }

    @Override
    public RegionFactory initiateService(Map<String, Object> configurationValues, ServiceRegistryImplementor registry) {
        final RegionFactory provider = RegionFactoryInitiator.INSTANCE.initiateService(configurationValues, registry);
        // Hibernate tells "no caching" by this type: keep it unwrapped.
        if (provider == null
                || provider instanceof NoCachingRegionFactory
                || provider instanceof RoutingRegionFactory) {
            return provider;
        }
        return new RoutingRegionFactory(provider);
    }
}
