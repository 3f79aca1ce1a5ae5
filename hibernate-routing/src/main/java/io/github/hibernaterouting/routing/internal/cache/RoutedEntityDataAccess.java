package io.github.hibernaterouting.routing.internal.cache;

import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.access.EntityDataAccess;
import org.hibernate.cache.spi.access.SoftLock;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;

/** Entity data: keys without the connection identifier, filled by loads from the primary only. */
final class RoutedEntityDataAccess extends RoutedDataAccess<EntityDataAccess> implements EntityDataAccess {
    RoutedEntityDataAccess(EntityDataAccess delegate, DomainDataRegion region) {
        super(delegate, region);
    }

    @Override
    public Object generateCacheKey(
            Object id,
            EntityPersister rootEntityDescriptor,
            SessionFactoryImplementor factory,
            String tenantIdentifier) {
        // The same key as Cache.evict(Class, id) builds: the provider's, with no tenant.
        return delegate.generateCacheKey(id, rootEntityDescriptor, factory, null);
    }

    @Override
    public Object getCacheKeyId(Object cacheKey) {
        return delegate.getCacheKeyId(cacheKey);
    }

    @Override
    public boolean insert(SharedSessionContractImplementor session, Object key, Object value, Object version) {
        return delegate.insert(session, key, value, version);
    }

    @Override
    public boolean afterInsert(SharedSessionContractImplementor session, Object key, Object value, Object version) {
        return delegate.afterInsert(session, key, value, version);
    }

    @Override
    public boolean update(
            SharedSessionContractImplementor session,
            Object key,
            Object value,
            Object currentVersion,
            Object previousVersion) {
        return delegate.update(session, key, value, currentVersion, previousVersion);
    }

    @Override
    public boolean afterUpdate(
            SharedSessionContractImplementor session,
            Object key,
            Object value,
            Object currentVersion,
            Object previousVersion,
            SoftLock lock) {
        return delegate.afterUpdate(session, key, value, currentVersion, previousVersion, lock);
    }
}
