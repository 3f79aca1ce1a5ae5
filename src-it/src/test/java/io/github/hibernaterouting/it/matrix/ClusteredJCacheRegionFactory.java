package io.github.hibernaterouting.it.matrix;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.hibernate.cache.cfg.spi.DomainDataRegionBuildingContext;
import org.hibernate.cache.cfg.spi.DomainDataRegionConfig;
import org.hibernate.cache.jcache.internal.JCacheRegionFactory;
import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.access.CachedDomainDataAccess;
import org.hibernate.cache.spi.access.CollectionDataAccess;
import org.hibernate.cache.spi.access.EntityDataAccess;
import org.hibernate.cache.spi.access.NaturalIdDataAccess;

/**
 * Hibernate's JCache provider for persistence units in one JVM that share their regions, with one lock
 * a region across all of them, as a clustered cache that supports locking has.
 *
 * <p>Hibernate's {@code READ_WRITE} strategy makes "read the entry, then put the loaded state" atomic
 * against "lock the entry, commit, put the new state" with a lock of the session factory's own access
 * object. Two session factories over one Ehcache have two such locks and one store: a load of version
 * 16 that read the entry before the other factory's update of version 17 can put 16 after that update
 * put 17, and the cache serves 16 from then on, with routing or without it. Hibernate's documentation
 * asks for a cache that supports locking when {@code READ_WRITE} is used in a cluster; this is that
 * cache for the checker matrix's two instances. {@code ClusteredJCacheRegionFactoryIT} shows the race
 * with the plain provider and its absence with this one.
 */
public class ClusteredJCacheRegionFactory extends JCacheRegionFactory {
    private static final Map<String, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    @Override
    public DomainDataRegion buildDomainDataRegion(
            DomainDataRegionConfig regionConfig, DomainDataRegionBuildingContext buildingContext) {
        final DomainDataRegion region = super.buildDomainDataRegion(regionConfig, buildingContext);
        return proxy(DomainDataRegion.class, region, new Region(region, lock(region.getName())));
    }

    /**
     * The lock every persistence unit of this JVM takes to change or read region {@code name} (the name
     * Hibernate gives the region, without the cache's prefix: units with other prefixes share it too).
     */
    private static ReentrantLock lock(String name) {
        return LOCKS.computeIfAbsent(name, ignored -> new ReentrantLock());
    }

    /** Whether a thread waits for the lock of a region of this JVM. */
    static boolean anyWaiting() {
        return LOCKS.values().stream().anyMatch(ReentrantLock::hasQueuedThreads);
    }

    private static <T> T proxy(Class<T> type, Object target, InvocationHandler handler) {
        return type.cast(Proxy.newProxyInstance(
                ClusteredJCacheRegionFactory.class.getClassLoader(), new Class<?>[] {type}, handler));
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** The region: hands out accesses that hold the region's lock for each call. */
    private record Region(DomainDataRegion delegate, ReentrantLock lock) implements InvocationHandler {
        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            final Object result = ClusteredJCacheRegionFactory.invoke(delegate, method, args);
            if (result instanceof EntityDataAccess access) {
                return proxy(EntityDataAccess.class, access, new Locked(access, lock));
            }
            if (result instanceof CollectionDataAccess access) {
                return proxy(CollectionDataAccess.class, access, new Locked(access, lock));
            }
            if (result instanceof NaturalIdDataAccess access) {
                return proxy(NaturalIdDataAccess.class, access, new Locked(access, lock));
            }
            return result;
        }
    }

    /**
     * An access whose every call holds the region's lock; Hibernate's own lock is taken inside it, so
     * the order is always this lock first and no two threads can deadlock on the pair.
     */
    private record Locked(CachedDomainDataAccess delegate, ReentrantLock lock) implements InvocationHandler {
        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            if (method.getDeclaringClass() == Object.class) {
                return ClusteredJCacheRegionFactory.invoke(delegate, method, args);
            }
            lock.lock();
            try {
                return ClusteredJCacheRegionFactory.invoke(delegate, method, args);
            } finally {
                lock.unlock();
            }
        }
    }
}
