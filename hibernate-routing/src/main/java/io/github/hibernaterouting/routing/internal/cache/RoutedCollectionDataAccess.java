package io.github.hibernaterouting.routing.internal.cache;

import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.access.CollectionDataAccess;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.persister.collection.CollectionPersister;

/** Collection data: keys without the connection identifier, filled by loads from the primary only. */
final class RoutedCollectionDataAccess extends RoutedDataAccess<CollectionDataAccess> implements CollectionDataAccess {
    RoutedCollectionDataAccess(CollectionDataAccess delegate, DomainDataRegion region) {
        super(delegate, region);
    }

    @Override
    public Object generateCacheKey(
            Object id,
            CollectionPersister collectionDescriptor,
            SessionFactoryImplementor factory,
            String tenantIdentifier) {
        // The same key as Cache.evictCollectionData(role, id) builds: the provider's, with no tenant.
        return delegate.generateCacheKey(id, collectionDescriptor, factory, null);
    }

    @Override
    public Object getCacheKeyId(Object cacheKey) {
        return delegate.getCacheKeyId(cacheKey);
    }
}
