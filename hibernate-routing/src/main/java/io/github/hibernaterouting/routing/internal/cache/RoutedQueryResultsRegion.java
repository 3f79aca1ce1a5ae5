package io.github.hibernaterouting.routing.internal.cache;

import org.hibernate.cache.spi.ExtendedStatisticsSupport;
import org.hibernate.cache.spi.QueryResultsRegion;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

/**
 * A provider's query-results region that takes results only from queries that ran on the primary
 * ({@link CacheFills}). Hibernate stores a result with the time its session's transaction started and
 * serves it only if no table it read was written since; a result read on a lagging replica after such
 * a write would pass that check while missing the write, until the entry expires.
 */
class RoutedQueryResultsRegion implements QueryResultsRegion {
    private final QueryResultsRegion delegate;
    private final RegionFactory factory;

    RoutedQueryResultsRegion(QueryResultsRegion delegate, RegionFactory factory) {
        this.delegate = delegate;
        this.factory = factory;
    }

    /** Wraps {@code region}, keeping its element counts for Hibernate's statistics if it reports them. */
    static QueryResultsRegion of(QueryResultsRegion region, RegionFactory factory) {
        return region instanceof ExtendedStatisticsSupport statistics
                ? new WithStatistics(region, factory, statistics)
                : new RoutedQueryResultsRegion(region, factory);
    }

    @Override
    public Object getFromCache(Object key, SharedSessionContractImplementor session) {
        final Object cached = delegate.getFromCache(key, session);
        if (cached != null) {
            CacheFills.served(session);
        }
        return cached;
    }

    @Override
    public void putIntoCache(Object key, Object value, SharedSessionContractImplementor session) {
        if (CacheFills.fromPrimary(session)) {
            delegate.putIntoCache(key, value, session);
            if (factory instanceof RoutingRegionFactory routing) {
                routing.queryResultCached();
            }
        }
    }

    @Override
    public String getName() {
        return delegate.getName();
    }

    @Override
    public RegionFactory getRegionFactory() {
        return factory;
    }

    @Override
    public void clear() {
        delegate.clear();
    }

    @Override
    public void destroy() {
        delegate.destroy();
    }

    @Override
    public String toString() {
        return "RoutedQueryResultsRegion[" + delegate + "]";
    }

    private static final class WithStatistics extends RoutedQueryResultsRegion implements ExtendedStatisticsSupport {
        private final ExtendedStatisticsSupport statistics;

        WithStatistics(QueryResultsRegion delegate, RegionFactory factory, ExtendedStatisticsSupport statistics) {
            super(delegate, factory);
            this.statistics = statistics;
        }

        @Override
        public long getElementCountInMemory() {
            return statistics.getElementCountInMemory();
        }

        @Override
        public long getElementCountOnDisk() {
            return statistics.getElementCountOnDisk();
        }

        @Override
        public long getSizeInMemory() {
            return statistics.getSizeInMemory();
        }
    }
}
