package io.github.hibernaterouting.routing.internal.cache;

import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.hibernate.boot.spi.SessionFactoryOptions;
import org.hibernate.cache.cfg.spi.DomainDataRegionBuildingContext;
import org.hibernate.cache.cfg.spi.DomainDataRegionConfig;
import org.hibernate.cache.spi.CacheTransactionSynchronization;
import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.QueryResultsRegion;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.cache.spi.TimestampsRegion;
import org.hibernate.cache.spi.access.AccessType;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.service.spi.Configurable;
import org.hibernate.service.spi.ServiceRegistryAwareService;
import org.hibernate.service.spi.ServiceRegistryImplementor;
import org.hibernate.service.spi.Startable;

/**
 * Whatever second-level cache provider the persistence unit configures, made safe for routing:
 * Hibernate keys its caches by the session's tenant identifier, which under routing is the
 * connection identifier ({@code "primary"} or {@code "replica"}), and fills them with whatever a
 * session loaded, also on a lagging replica.
 *
 * <ul>
 * <li>Entity, collection and natural-id keys ignore the connection identifier: every session, and
 * {@code Cache.evict…}, uses one entry per entity, collection and natural id.</li>
 * <li>Loads and queries fill the entity, collection, natural-id and query-results caches only with
 * data read on the primary ({@link CacheFills}); writes update and invalidate them as Hibernate
 * always does.</li>
 * <li>Query-results keys keep the identifier (Hibernate puts it into the key's parameters, out of
 * reach of the provider): a cached result is reused by sessions of the same identifier only. Every
 * entry came from the primary and is invalidated by the update-timestamps cache, which is shared.</li>
 * </ul>
 *
 * Everything else (region names, timestamps, transactions, statistics, lifecycle) is the provider's.
 * {@link #delegate()} gives the provider's own factory.
 */
public final class RoutingRegionFactory implements RegionFactory, ServiceRegistryAwareService, Configurable, Startable {
    private static final long serialVersionUID = 1L;

    private final RegionFactory delegate;
    /** Run once, when the first query result is cached; {@code null} when nothing is to run. */
    private final AtomicReference<Runnable> firstQueryResult = new AtomicReference<>();

    RoutingRegionFactory(RegionFactory delegate) {
        this.delegate = delegate;
    }

    /** The cache provider's own region factory. */
    public RegionFactory delegate() {
        return delegate;
    }

    @Override
    public void injectServices(ServiceRegistryImplementor serviceRegistry) {
        if (delegate instanceof ServiceRegistryAwareService aware) {
            aware.injectServices(serviceRegistry);
        }
    }

    @Override
    public void configure(Map<String, Object> configurationValues) {
        if (delegate instanceof Configurable configurable) {
            configurable.configure(configurationValues);
        }
    }

    @Override
    public void start() {
        if (delegate instanceof Startable startable) {
            startable.start();
        }
    }

    @Override
    public void start(SessionFactoryOptions settings, Map<String, Object> configValues) {
        delegate.start(settings, configValues);
    }

    @Override
    public boolean isMinimalPutsEnabledByDefault() {
        return delegate.isMinimalPutsEnabledByDefault();
    }

    @Override
    public AccessType getDefaultAccessType() {
        return delegate.getDefaultAccessType();
    }

    @Override
    public String qualify(String regionName) {
        return delegate.qualify(regionName);
    }

    @Override
    public CacheTransactionSynchronization createTransactionContext(SharedSessionContractImplementor session) {
        return delegate.createTransactionContext(session);
    }

    @Override
    public long nextTimestamp() {
        return delegate.nextTimestamp();
    }

    @Override
    public long getTimeout() {
        return delegate.getTimeout();
    }

    @Override
    public DomainDataRegion buildDomainDataRegion(
            DomainDataRegionConfig regionConfig, DomainDataRegionBuildingContext buildingContext) {
        return RoutedDomainDataRegion.of(delegate.buildDomainDataRegion(regionConfig, buildingContext), this);
    }

    @Override
    public QueryResultsRegion buildQueryResultsRegion(String regionName, SessionFactoryImplementor sessionFactory) {
        return RoutedQueryResultsRegion.of(delegate.buildQueryResultsRegion(regionName, sessionFactory), this);
    }

    @Override
    public TimestampsRegion buildTimestampsRegion(String regionName, SessionFactoryImplementor sessionFactory) {
        // Invalidation timestamps are written by writes, never by reads: the provider's, unchanged.
        return delegate.buildTimestampsRegion(regionName, sessionFactory);
    }

    @Override
    public void stop() {
        delegate.stop();
    }

    @Override
    public String toString() {
        return "RoutingRegionFactory[" + delegate + "]";
    }

    /** Runs {@code action} once, when a query result is first put into the query cache. */
    public void onFirstQueryResult(Runnable action) {
        firstQueryResult.set(action);
    }

    void queryResultCached() {
        final Runnable action = firstQueryResult.getAndSet(null);
        if (action != null) {
            action.run();
        }
    }
}
