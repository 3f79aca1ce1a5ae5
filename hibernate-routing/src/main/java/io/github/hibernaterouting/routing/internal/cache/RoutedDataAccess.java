package io.github.hibernaterouting.routing.internal.cache;

import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.access.AccessType;
import org.hibernate.cache.spi.access.CachedDomainDataAccess;
import org.hibernate.cache.spi.access.SoftLock;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

/**
 * A provider's access to cached entity, collection or natural-id data, whose loads fill the cache
 * only from the primary ({@link CacheFills}). Reads, write-time puts, locks and evictions are the
 * provider's.
 */
abstract class RoutedDataAccess<D extends CachedDomainDataAccess> implements CachedDomainDataAccess {
    final D delegate;
    private final DomainDataRegion region;

    RoutedDataAccess(D delegate, DomainDataRegion region) {
        this.delegate = delegate;
        this.region = region;
    }

    @Override
    public DomainDataRegion getRegion() {
        return region;
    }

    @Override
    public AccessType getAccessType() {
        return delegate.getAccessType();
    }

    @Override
    public Object get(SharedSessionContractImplementor session, Object key) {
        final Object cached = delegate.get(session, key);
        if (cached != null && servesData()) {
            CacheFills.served(session);
        }
        return cached;
    }

    /**
     * Whether what {@link #get} finds is data the session reads (entities, collections), which makes
     * the session's later replica reads as fresh as the cache ({@link CacheFills#served}). A natural-id
     * resolution is not: Hibernate also looks one up while it loads an entity from a replica, to compare.
     */
    boolean servesData() {
        return true;
    }

    @Override
    public boolean putFromLoad(SharedSessionContractImplementor session, Object key, Object value, Object version) {
        return CacheFills.fromPrimary(session) && delegate.putFromLoad(session, key, value, version);
    }

    @Override
    public boolean putFromLoad(
            SharedSessionContractImplementor session,
            Object key,
            Object value,
            Object version,
            boolean minimalPutOverride) {
        return CacheFills.fromPrimary(session)
                && delegate.putFromLoad(session, key, value, version, minimalPutOverride);
    }

    @Override
    public SoftLock lockItem(SharedSessionContractImplementor session, Object key, Object version) {
        return delegate.lockItem(session, key, version);
    }

    @Override
    public void unlockItem(SharedSessionContractImplementor session, Object key, SoftLock lock) {
        delegate.unlockItem(session, key, lock);
    }

    @Override
    public void remove(SharedSessionContractImplementor session, Object key) {
        delegate.remove(session, key);
    }

    @Override
    public void removeAll(SharedSessionContractImplementor session) {
        delegate.removeAll(session);
    }

    @Override
    public boolean contains(Object key) {
        return delegate.contains(key);
    }

    @Override
    public SoftLock lockRegion() {
        return delegate.lockRegion();
    }

    @Override
    public void unlockRegion(SoftLock lock) {
        delegate.unlockRegion(lock);
    }

    @Override
    public void evict(Object key) {
        delegate.evict(key);
    }

    @Override
    public void evictAll() {
        delegate.evictAll();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + delegate + "]";
    }
}
