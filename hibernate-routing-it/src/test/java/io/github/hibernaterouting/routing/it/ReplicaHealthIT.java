package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Health and lag come from connections the application cannot exhaust: a replica whose pool is
 * busy with long queries is not declared down (its reads fall back, its breaker stays closed, its
 * connections stay); a saturated primary pool does not freeze lag data; and a replica whose lag
 * data is older than the bound gets no reads.
 */
@ExtendWith(RoutingLeakCheck.class)
class ReplicaHealthIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /** One replica (standby 1) with a pool of two connections that a caller waits 250 ms for. */
    private static EntityManagerFactory smallReplicaPool(String policy, SimpleMeterRegistry meters) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.REPLICA_URLS, cluster.standby(1).jdbcUrl());
        settings.put(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "2");
        settings.put(RoutingSettings.REPLICA_CONNECTION_TIMEOUT, "250ms");
        settings.put(RoutingSettings.REPLICA_FAILURE, policy);
        settings.put(RoutingSettings.METER_REGISTRY, meters);
        return emf(cluster, settings);
    }

    /** Runs {@code count} report queries ({@code pg_sleep}) on the replica at once; returns when they all hold a connection. */
    private static List<Future<?>> longReports(
            EntityManagerFactory factory, ExecutorService threads, int count, int seconds) {
        final List<Future<?>> reports = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            reports.add(threads.submit(() -> {
                try (EntityManager em = factory.createEntityManager()) {
                    em.createNativeQuery("select pg_sleep(" + seconds + ")").getSingleResult();
                }
            }));
        }
        awaitTrue(() -> replicaPool(factory).active() == count, "the reports hold every replica connection");
        return reports;
    }

    private static RoutingStatus.Pool replicaPool(EntityManagerFactory factory) {
        return RoutingStatus.of(factory).nodes().get(1).pool();
    }

    @Test
    void replicaWhosePoolIsBusy_isNotDeclaredDown_itsReadsFallBack_andItsConnectionsStay() throws Exception {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory busy = smallReplicaPool("FALLBACK", meters);
        final ExecutorService threads = Executors.newFixedThreadPool(2);
        try (busy) {
            final ReplicaNode node = runtime(busy).replicas().get(0);
            final List<Future<?>> reports = longReports(busy, threads, 2, 4);

            runtime(busy).checkReplicasNow();
            assertThat(node.isUp())
                    .as("the health check does not need the busy pool")
                    .isTrue();

            try (EntityManager em = busy.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("no replica connection within 250 ms: the primary")
                        .isTrue();
            }
            assertThat(node.breaker().isClosed())
                    .as("a busy pool does not open the breaker")
                    .isTrue();
            assertThat(node.isUp()).isTrue();
            assertThat(meters.find(RoutingMetrics.REPLICA_FAILURES).counter())
                    .as("a busy pool is not a replica failure")
                    .isNull();
            assertThat(meters.get(RoutingMetrics.FALLBACKS)
                            .tag("reason", "replica-busy")
                            .counter()
                            .count())
                    .isEqualTo(1);

            for (Future<?> report : reports) {
                report.get();
            }
            final RoutingStatus.Pool pool = replicaPool(busy);
            assertThat(pool.active() + pool.idle())
                    .as("the reports' connections went back to the pool, not evicted")
                    .isEqualTo(2);
            try (EntityManager em = busy.createEntityManager()) {
                assertThat(servedBy(cluster, em)).isEqualTo(cluster.standby(1));
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void replicaWhosePoolIsBusy_failsTheRead_underFail_withoutOpeningTheBreaker() throws Exception {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory busy = smallReplicaPool("FAIL", meters);
        final ExecutorService threads = Executors.newFixedThreadPool(2);
        try (busy) {
            final ReplicaNode node = runtime(busy).replicas().get(0);
            final List<Future<?>> reports = longReports(busy, threads, 2, 3);
            try (EntityManager em = busy.createEntityManager()) {
                assertThatThrownBy(() -> servedBy(cluster, em))
                        .hasStackTraceContaining("replica1")
                        .hasStackTraceContaining("busy")
                        .hasStackTraceContaining(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE);
            }
            runtime(busy).checkReplicasNow();
            assertThat(node.breaker().isClosed()).isTrue();
            assertThat(node.isUp()).isTrue();
            for (Future<?> report : reports) {
                report.get();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void saturatedPrimaryPool_doesNotFreezeLagData_aPausedStandbyGoesOverTheBoundInTime() throws Exception {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "2");
        settings.put(RoutingSettings.MAX_REPLICA_LAG_BYTES, "64kB");
        final EntityManagerFactory bounded = emf(cluster, settings);
        final List<EntityManager> holders = new ArrayList<>();
        try (bounded) {
            try {
                for (int i = 0; i < 2; i++) {
                    final EntityManager em = bounded.createEntityManager();
                    holders.add(em);
                    em.setProperty(RoutingSettings.STRATEGY, Strategy.PRIMARY.name());
                    em.getTransaction().begin();
                    assertThat(servedBy(cluster, em).isPrimary()).isTrue();
                }
                assertThat(RoutingStatus.of(bounded).nodes().get(0).pool().active())
                        .as("the application holds every primary connection")
                        .isEqualTo(2);

                cluster.pauseReplay(cluster.standby(1));
                onPrimary(
                        cluster,
                        "insert into note select nextval('note_seq'), repeat('x', 1000) from generate_series(1, 2000)");
                final ReplicaNode paused = runtime(bounded).replicas().get(0);
                // Health checks every 100 ms: a few of them, not the primary pool's 30 s timeout.
                awaitTrue(
                        () -> paused.lagBytes() > 64 * 1024, "the paused standby's lag is seen while the pool is full");
                cluster.awaitReplay(cluster.standby(2), cluster.currentWalLsn(), Duration.ofSeconds(30));
                // And the library has seen it: a check taken while standby 2 was still replaying the insert
                // found it over the bound too, and then every read would wait for the full primary pool.
                final ReplicaNode replaying = runtime(bounded).replicas().get(1);
                awaitTrue(
                        () -> replaying.lagBytes() >= 0 && replaying.lagBytes() <= 64 * 1024,
                        "standby 2's lag is seen back within the bound while the pool is full");
                assertThat(servedByFreshSessions(bounded, 6)).containsExactly(cluster.standby(2));
            } finally {
                for (EntityManager em : holders) {
                    em.getTransaction().rollback();
                    em.close();
                }
            }
        }
    }

    @Test
    void replicaWhoseLagDataIsOlderThanTheBound_getsNoReads_whileTheOtherIsStillChecked() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("hibernate.hikari.driverClassName", BlockableDriver.class.getName());
        settings.put(RoutingSettings.MAX_REPLICA_LAG, "1s");
        final EntityManagerFactory blockable = emf(cluster, settings);
        try (blockable) {
            assertThat(((com.zaxxer.hikari.HikariDataSource)
                                    runtime(blockable).replicas().get(0).connections())
                            .getDriverClassName())
                    .isEqualTo(BlockableDriver.class.getName());
            assertThat(servedByFreshSessions(blockable, 6))
                    .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
            BlockableDriver.block(cluster.standby(1).jdbcUrl());
            final long blockedAt = System.nanoTime();
            final long deadline = blockedAt + Duration.ofSeconds(5).toNanos();
            Set<Node> served = servedByFreshSessions(blockable, 4);
            while (!served.equals(Set.of(cluster.standby(2)))) {
                assertThat(System.nanoTime())
                        .as(
                                "standby 1, whose lag is no longer known, gets no reads within 5 s (served by %s; %s)",
                                served, RoutingStatus.of(blockable).nodes())
                        .isLessThan(deadline);
                pause();
                served = servedByFreshSessions(blockable, 4);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - blockedAt))
                    // The bound counts from the last successful check, which can be one health-check interval
                    // (100 ms), and more on a loaded machine, before the block.
                    .as("the lag data went stale about the bound (1 s) after the last check, not at the block")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(750));
        } finally {
            BlockableDriver.unblockAll();
        }
    }

    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within 5 s").isLessThan(deadline);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
