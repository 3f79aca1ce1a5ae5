package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.cache.RoutingRegionFactory;
import io.github.hibernaterouting.routing.internal.session.ReplicaReadGuard;
import org.hibernate.boot.Metadata;
import org.hibernate.boot.spi.BootstrapContext;
import org.hibernate.cache.internal.NoCachingRegionFactory;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.service.spi.EventListenerRegistry;
import org.hibernate.event.spi.EventType;
import org.hibernate.integrator.spi.Integrator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers the {@link ReplicaReadGuard} event listeners when routing is on, warns about named
 * queries that give the routing strategy as a plain query hint, which Hibernate drops
 * ({@link NamedQueryHintCheck}), and warns if the second-level cache provider escaped the
 * library's wrapper ({@link RoutingRegionFactory}).
 *
 * <p>Found by Hibernate through {@code META-INF/services/org.hibernate.integrator.spi.Integrator}.
 */
public final class RoutingIntegrator implements Integrator {
    private static final Logger LOG = LoggerFactory.getLogger(RoutingIntegrator.class);

    @Override
    public void integrate(
            Metadata metadata, BootstrapContext bootstrapContext, SessionFactoryImplementor sessionFactory) {
        final MultiTenantConnectionProvider<?> provider =
                sessionFactory.getServiceRegistry().getService(MultiTenantConnectionProvider.class);
        if (!(provider instanceof RoutingConnectionProvider routing) || routing.runtime() == null) {
            return;
        }
        final ReplicaReadGuard guard = routing.runtime().guard();
        final EventListenerRegistry listeners = sessionFactory.getEventListenerRegistry();
        listeners.appendListeners(EventType.POST_LOAD, guard);
        listeners.appendListeners(EventType.MERGE, guard);
        // After Hibernate's own listener, which initializes the collection.
        listeners.appendListeners(EventType.INIT_COLLECTION, guard);
        listeners.appendListeners(EventType.PRE_INSERT, guard);
        listeners.appendListeners(EventType.PRE_UPSERT, guard);
        listeners.appendListeners(EventType.PRE_UPDATE, guard);
        listeners.appendListeners(EventType.PRE_DELETE, guard);
        listeners.appendListeners(EventType.PRE_COLLECTION_RECREATE, guard);
        listeners.appendListeners(EventType.PRE_COLLECTION_UPDATE, guard);
        listeners.appendListeners(EventType.PRE_COLLECTION_REMOVE, guard);
        final NamedQueryHintCheck hints = new NamedQueryHintCheck();
        hints.checkModel(bootstrapContext.getModelsContext());
        // The rest once the session factory has prepared its named queries.
        sessionFactory.addObserver(hints);
        final RegionFactory caching = sessionFactory.getServiceRegistry().getService(RegionFactory.class);
        if (caching != null
                && !(caching instanceof NoCachingRegionFactory)
                && !(caching instanceof RoutingRegionFactory)) {
            // Installed as a service instance, or by an initiator contributed after the library's.
            LOG.warn(
                    "The second-level cache provider {} was installed without hibernate-routing's wrapper: its caches "
                            + "are split by connection identifier and filled by reads on replicas, so they can serve "
                            + "data older than a write, or than the lag bound. Configure it with "
                            + "hibernate.cache.region.factory_class instead",
                    caching.getClass().getName());
        }
        final var options = sessionFactory.getSessionFactoryOptions();
        if (caching == null
                || caching instanceof NoCachingRegionFactory
                || !routing.runtime().stampsCrossLocalCaches()) {
            return;
        }
        if (options.isSecondLevelCacheEnabled() && cachesAnything(metadata)) {
            warnLocalCache();
        } else if (options.isQueryCacheEnabled() && caching instanceof RoutingRegionFactory wrapper) {
            // The query cache is on (Quarkus' default) but caches only queries marked cacheable: warn at the first.
            wrapper.onFirstQueryResult(RoutingIntegrator::warnLocalCache);
        } else if (options.isQueryCacheEnabled()) {
            warnLocalCache();
        }
    }

    private static void warnLocalCache() {
        LOG.warn(
                "Read-your-writes crosses instances here (actors' stamps in a table or in Redis), but a"
                        + " second-level cache local to each instance is not told of a write made through"
                        + " another one: it can serve an actor an entry older than its own write, beyond any lag"
                        + " bound. Use a cache shared by every instance (a clustered or distributed provider) and"
                        + " set {}=true, or switch the second-level and query caches off",
                RoutingSettings.SECOND_LEVEL_CACHE_SHARED);
    }

    private static boolean cachesAnything(Metadata metadata) {
        return metadata.getEntityBindings().stream()
                        .anyMatch(entity -> entity.isCached() || entity.getNaturalIdCacheRegionName() != null)
                || metadata.getCollectionBindings().stream()
                        .anyMatch(collection -> collection.getCacheConcurrencyStrategy() != null);
    }
}
