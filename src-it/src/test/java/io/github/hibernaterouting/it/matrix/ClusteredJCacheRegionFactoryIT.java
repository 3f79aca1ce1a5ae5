package io.github.hibernaterouting.it.matrix;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.hibernate.cache.cfg.spi.DomainDataRegionBuildingContext;
import org.hibernate.cache.cfg.spi.DomainDataRegionConfig;
import org.hibernate.cache.jcache.internal.JCacheRegionFactory;
import org.hibernate.cache.spi.support.DomainDataStorageAccess;
import org.hibernate.cfg.AvailableSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Why the checker matrix's two instances share their second-level cache through
 * {@link ClusteredJCacheRegionFactory}: with Hibernate's plain JCache provider, two session factories
 * over one Ehcache lose an update of a {@code READ_WRITE} entity, without hibernate-routing (routing
 * is off here: no replicas). The interleaving is forced: instance B's load has read the cache entry
 * (none) and is held just before it puts the state it loaded; instance A then loads, updates and
 * commits; then B goes on.
 */
class ClusteredJCacheRegionFactoryIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Hold HOLD = new Hold();
    private static PostgresCluster cluster;

    @BeforeAll
    static void startCluster() throws SQLException {
        cluster = PostgresCluster.builder().standbys(0).start();
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute("create table versioned_counters (id int primary key, value bigint not null,"
                    + " version bigint not null)");
        }
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void reset() throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute("truncate versioned_counters; insert into versioned_counters values (1, 0, 0)");
        }
    }

    @Test
    void plainJCache_twoFactoriesSharingRegions_keepAStaleEntryAfterTheOtherFactorysUpdate() throws Exception {
        final long cached = race(PlainHolding.class, "plain-" + System.nanoTime());

        assertThat(cached)
                .as("the version the cache serves after A committed version 1 (B put the version 0 it loaded"
                        + " over A's version 1)")
                .isZero();
    }

    @Test
    void clusteredJCache_twoFactoriesSharingRegions_serveTheCommittedVersion() throws Exception {
        final long cached = race(ClusteredHolding.class, "clustered-" + System.nanoTime());

        assertThat(cached)
                .as("the version the cache serves after A committed version 1")
                .isEqualTo(1);
    }

    /**
     * Runs the interleaving with two persistence units of region factory {@code factory} sharing regions
     * under {@code prefix}, and returns the version a fresh find of instance A reads (from the cache,
     * which then holds the entity).
     */
    private static long race(Class<? extends JCacheRegionFactory> factory, String prefix) throws Exception {
        try (EntityManagerFactory a = emf("a", factory, prefix);
                EntityManagerFactory b = emf("b", factory, prefix)) {
            final CompletableFuture<Long> loadB = HOLD.hold(() -> {
                try (EntityManager em = b.createEntityManager()) {
                    return em.find(VersionedCounter.class, 1).version;
                }
            });
            assertThat(HOLD.held.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("B's load reached its cache put")
                    .isTrue();
            final CompletableFuture<Void> updateA = CompletableFuture.runAsync(() -> {
                try (EntityManager em = a.createEntityManager()) {
                    em.getTransaction().begin();
                    em.find(VersionedCounter.class, 1).increment();
                    em.getTransaction().commit();
                }
            });
            if (factory == ClusteredHolding.class) {
                awaitWaiting();
                assertThat(updateA).as("A's update, while B holds the region").isNotDone();
            } else {
                updateA.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            HOLD.release.countDown();
            assertThat(loadB.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("the version B loaded")
                    .isZero();
            updateA.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(versionOnPrimary()).as("the committed version").isEqualTo(1);
            try (EntityManager em = a.createEntityManager()) {
                assertThat(a.getCache().contains(VersionedCounter.class, 1))
                        .as("the cache holds the entity")
                        .isTrue();
                return em.find(VersionedCounter.class, 1).version;
            }
        } finally {
            HOLD.reset();
        }
    }

    /** Waits until a thread waits for a region lock of {@link ClusteredJCacheRegionFactory}. */
    private static void awaitWaiting() throws InterruptedException {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!ClusteredJCacheRegionFactory.anyWaiting()) {
            assertThat(System.nanoTime() - deadline)
                    .as("A's update waits for the region lock B holds")
                    .isNegative();
            Thread.sleep(1);
        }
    }

    private static long versionOnPrimary() throws SQLException {
        return RoutingTestSupport.longOnPrimary(cluster, "select version from versioned_counters where id = 1");
    }

    private static EntityManagerFactory emf(String name, Class<? extends JCacheRegionFactory> factory, String prefix) {
        final PersistenceConfiguration configuration = new PersistenceConfiguration("cache-race-" + name);
        configuration.managedClass(VersionedCounter.class);
        configuration.property("jakarta.persistence.jdbc.url", cluster.primary().jdbcUrl());
        configuration.property("jakarta.persistence.jdbc.user", cluster.user());
        configuration.property("jakarta.persistence.jdbc.password", cluster.password());
        configuration.property("hibernate.hbm2ddl.auto", "none");
        configuration.property(AvailableSettings.USE_SECOND_LEVEL_CACHE, "true");
        configuration.property(AvailableSettings.CACHE_REGION_FACTORY, factory.getName());
        configuration.property("hibernate.javax.cache.provider", "org.ehcache.jsr107.EhcacheCachingProvider");
        configuration.property("hibernate.javax.cache.missing_cache_strategy", "create");
        configuration.property(AvailableSettings.CACHE_REGION_PREFIX, prefix);
        return configuration.createEntityManagerFactory();
    }

    /** Holds one thread's first cache put until released. */
    static final class Hold {
        volatile Thread holder;
        volatile CountDownLatch held = new CountDownLatch(1);
        volatile CountDownLatch release = new CountDownLatch(1);

        CompletableFuture<Long> hold(java.util.concurrent.Callable<Long> work) {
            final CompletableFuture<Long> result = new CompletableFuture<>();
            final Thread thread = new Thread(() -> {
                try {
                    result.complete(work.call());
                } catch (Throwable e) {
                    result.completeExceptionally(e);
                }
            });
            holder = thread;
            thread.start();
            return result;
        }

        void reset() {
            holder = null;
            held = new CountDownLatch(1);
            release.countDown();
            release = new CountDownLatch(1);
        }

        DomainDataStorageAccess around(DomainDataStorageAccess storage) {
            return (DomainDataStorageAccess) Proxy.newProxyInstance(
                    Hold.class.getClassLoader(), new Class<?>[] {DomainDataStorageAccess.class}, (p, method, args) -> {
                        if (method.getName().equals("putIntoCache") && Thread.currentThread() == holder) {
                            holder = null;
                            held.countDown();
                            if (!release.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                                throw new IllegalStateException("not released within " + WAIT);
                            }
                        }
                        try {
                            return method.invoke(storage, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    /** Hibernate's JCache provider, holding B's put. */
    public static final class PlainHolding extends JCacheRegionFactory {
        @Override
        protected DomainDataStorageAccess createDomainDataStorageAccess(
                DomainDataRegionConfig regionConfig, DomainDataRegionBuildingContext buildingContext) {
            return HOLD.around(super.createDomainDataStorageAccess(regionConfig, buildingContext));
        }
    }

    /** The matrix's provider, holding B's put. */
    public static final class ClusteredHolding extends ClusteredJCacheRegionFactory {
        @Override
        protected DomainDataStorageAccess createDomainDataStorageAccess(
                DomainDataRegionConfig regionConfig, DomainDataRegionBuildingContext buildingContext) {
            return HOLD.around(super.createDomainDataStorageAccess(regionConfig, buildingContext));
        }
    }
}
