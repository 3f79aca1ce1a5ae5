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
 * while routing is on. An integration that builds the cache provider with an initiator of its own (Quarkus)
 * gives that one instead.
 */
public final class RoutingRegionFactoryInitiator implements StandardServiceInitiator<RegionFactory> {
    private final StandardServiceInitiator<RegionFactory> delegate;

    /** Wraps what Hibernate's own {@link RegionFactoryInitiator} builds. */
    public RoutingRegionFactoryInitiator() {
        this(RegionFactoryInitiator.INSTANCE);
    }

    /** Wraps what {@code delegate} builds. */
    public RoutingRegionFactoryInitiator(StandardServiceInitiator<RegionFactory> delegate) {
        this.delegate = delegate;
    }

    @Override
    public Class<RegionFactory> getServiceInitiated() {
        return RegionFactory.class;
    }

    @Override
    public RegionFactory initiateService(Map<String, Object> configurationValues, ServiceRegistryImplementor registry) {
        final RegionFactory provider = delegate.initiateService(configurationValues, registry);
        // Hibernate tells "no caching" by this type: keep it unwrapped.
        if (provider == null
                || provider instanceof NoCachingRegionFactory
                || provider instanceof RoutingRegionFactory) {
            return provider;
        }
        return new RoutingRegionFactory(provider);
    }
}
