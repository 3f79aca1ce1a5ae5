package io.github.hibernaterouting.routing.internal.cache;

import org.hibernate.cache.internal.NaturalIdCacheKey;
import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.access.NaturalIdDataAccess;
import org.hibernate.cache.spi.access.SoftLock;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;

/**
 * Natural-id resolutions: keys without the connection identifier ({@link CacheFills#naturalIdKey}),
 * filled by loads from the primary only.
 */
final class RoutedNaturalIdDataAccess extends RoutedDataAccess<NaturalIdDataAccess> implements NaturalIdDataAccess {
    @Override
    boolean servesData() {
        return false;
    }

    RoutedNaturalIdDataAccess(NaturalIdDataAccess delegate, DomainDataRegion region) {
        super(delegate, region);
    }

    @Override
    public Object generateCacheKey(
            Object naturalIdValues, EntityPersister rootEntityDescriptor, SharedSessionContractImplementor session) {
        // The provider's key generation takes the session, and with it the connection identifier.
        return CacheFills.naturalIdKey(naturalIdValues, rootEntityDescriptor, session);
    }

    @Override
    public Object getNaturalIdValues(Object cacheKey) {
        return cacheKey instanceof NaturalIdCacheKey key
                ? key.getNaturalIdValues()
                : delegate.getNaturalIdValues(cacheKey);
    }

    @Override
    public boolean insert(SharedSessionContractImplementor session, Object key, Object value) {
        return delegate.insert(session, key, value);
    }

    @Override
    public boolean afterInsert(SharedSessionContractImplementor session, Object key, Object value) {
        return delegate.afterInsert(session, key, value);
    }

    @Override
    public boolean update(SharedSessionContractImplementor session, Object key, Object value) {
        return delegate.update(session, key, value);
    }

    @Override
    public boolean afterUpdate(SharedSessionContractImplementor session, Object key, Object value, SoftLock lock) {
        return delegate.afterUpdate(session, key, value, lock);
    }
}
