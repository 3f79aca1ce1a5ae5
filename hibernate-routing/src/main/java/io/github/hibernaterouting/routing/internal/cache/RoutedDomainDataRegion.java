package io.github.hibernaterouting.routing.internal.cache;

import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.ExtendedStatisticsSupport;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.cache.spi.access.CollectionDataAccess;
import org.hibernate.cache.spi.access.EntityDataAccess;
import org.hibernate.cache.spi.access.NaturalIdDataAccess;
import org.hibernate.metamodel.model.domain.NavigableRole;

/** A provider's region for entity, collection and natural-id data, whose accesses follow {@link CacheFills}. */
class RoutedDomainDataRegion implements DomainDataRegion {
    private final DomainDataRegion delegate;
    private final RegionFactory factory;

    RoutedDomainDataRegion(DomainDataRegion delegate, RegionFactory factory) {
        this.delegate = delegate;
        this.factory = factory;
    }

    /** Wraps {@code region}, keeping its element counts for Hibernate's statistics if it reports them. */
    static DomainDataRegion of(DomainDataRegion region, RegionFactory factory) {
        return region instanceof ExtendedStatisticsSupport statistics
                ? new WithStatistics(region, factory, statistics)
                : new RoutedDomainDataRegion(region, factory);
    }

    @Override
    public EntityDataAccess getEntityDataAccess(NavigableRole rootEntityRole) {
        return new RoutedEntityDataAccess(delegate.getEntityDataAccess(rootEntityRole), this);
    }

    @Override
    public NaturalIdDataAccess getNaturalIdDataAccess(NavigableRole rootEntityRole) {
        return new RoutedNaturalIdDataAccess(delegate.getNaturalIdDataAccess(rootEntityRole), this);
    }

    @Override
    public CollectionDataAccess getCollectionDataAccess(NavigableRole collectionRole) {
        return new RoutedCollectionDataAccess(delegate.getCollectionDataAccess(collectionRole), this);
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
        return "RoutedDomainDataRegion[" + delegate + "]";
    }

    private static final class WithStatistics extends RoutedDomainDataRegion implements ExtendedStatisticsSupport {
        private final ExtendedStatisticsSupport statistics;

        WithStatistics(DomainDataRegion delegate, RegionFactory factory, ExtendedStatisticsSupport statistics) {
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
