package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.LagBounds;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
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

    /** A report's query: a minute, far longer than a test needs the pool busy; {@link #endReports} cancels it. */
    private static final String REPORT = "select pg_sleep(60)";

    /**
     * Runs {@code count} report queries on the replica at once; returns when they all hold a connection. They
     * hold it until {@link #endReports} cancels them, so the pool stays busy for as long as the test needs,
     * however slow this machine is.
     */
    private static List<Future<?>> longReports(EntityManagerFactory factory, ExecutorService threads, int count) {
        final List<Future<?>> reports = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            reports.add(threads.submit(() -> {
                try (EntityManager em = factory.createEntityManager()) {
                    em.createNativeQuery(REPORT).getSingleResult();
                }
            }));
        }
        awaitTrue(() -> replicaPool(factory).active() == count, "the reports hold every replica connection");
        return reports;
    }

    /**
     * Cancels the reports ({@code pg_cancel_backend} on standby 1: the query fails with SQLSTATE 57014, its
     * connection stays good) and waits until each has ended so, having given its connection back. A report
     * whose query has not reached the server yet is cancelled at a later round.
     */
    private static void endReports(List<Future<?>> reports) throws Exception {
        awaitTrue(
                () -> {
                    cancelRunningReports();
                    return reports.stream().allMatch(Future::isDone);
                },
                "the cancelled reports end");
        for (Future<?> report : reports) {
            assertThatThrownBy(report::get)
                    .as("a cancelled report")
                    .isInstanceOf(ExecutionException.class)
                    .hasStackTraceContaining("canceling statement due to user request");
        }
    }

    private static void cancelRunningReports() {
        try (Connection admin = cluster.adminConnection(cluster.standby(1));
                Statement s = admin.createStatement()) {
            s.execute("select pg_cancel_backend(pid) from pg_stat_activity where query = '" + REPORT
                    + "' and pid <> pg_backend_pid()");
        } catch (SQLException e) {
            throw new AssertionError("cannot cancel the reports on standby 1", e);
        }
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
            final List<Future<?>> reports = longReports(busy, threads, 2);

            runtime(busy).checkReplicasNow();
            assertThat(node.isUp())
                    .as("the health check does not need the busy pool")
                    .isTrue();

            try (EntityManager em = busy.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("no replica connection within 250 ms: the primary (%s)", routingState(busy))
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

            endReports(reports);
            final RoutingStatus.Pool pool = replicaPool(busy);
            assertThat(pool.active() + pool.idle())
                    .as("the reports' connections went back to the pool, not evicted")
                    .isEqualTo(2);
            try (EntityManager em = busy.createEntityManager()) {
                assertThat(servedBy(cluster, em))
                        .as("the pool has connections again (%s)", routingState(busy))
                        .isEqualTo(cluster.standby(1));
            }
        } finally {
            cancelRunningReports();
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
            final List<Future<?>> reports = longReports(busy, threads, 2);
            try (EntityManager em = busy.createEntityManager()) {
                assertThatThrownBy(() -> servedBy(cluster, em))
                        .hasStackTraceContaining("replica1")
                        .hasStackTraceContaining("busy")
                        .hasStackTraceContaining(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE);
            }
            runtime(busy).checkReplicasNow();
            assertThat(node.breaker().isClosed()).isTrue();
            assertThat(node.isUp()).isTrue();
            endReports(reports);
        } finally {
            cancelRunningReports();
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
                assertThat(servedByFreshSessions(bounded, 6))
                        .as("only standby 2 is within the bound (%s)", routingState(bounded))
                        .containsExactly(cluster.standby(2));
            } finally {
                for (EntityManager em : holders) {
                    em.getTransaction().rollback();
                    em.close();
                }
            }
        }
    }

    /**
     * The age rule of the persistence unit below on its own: lag data older than its bound (1 s; never less
     * than three health-check intervals) is unknown.
     */
    private static final LagBounds AGE_RULE = new LagBounds(false, 0, 0, LagBounds.staleAfter(1000, 100));

    // When the lag data goes stale depends on when the last check that answered ran, which a starved health-check
    // thread can make any time before the block: the verdict is the library's reason (lag unknown, not down), and
    // the only time judged is a lower bound the age rule guarantees. The elapsed times are printed.
    @Test
    void replicaWhoseLagDataIsOlderThanTheBound_getsNoReads_whileTheOtherIsStillChecked() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("hibernate.hikari.driverClassName", BlockableDriver.class.getName());
        settings.put(RoutingSettings.MAX_REPLICA_LAG, "1s");
        final EntityManagerFactory blockable = emf(cluster, settings);
        try (blockable) {
            final ReplicaNode blocked = runtime(blockable).replicas().get(0);
            assertThat(((com.zaxxer.hikari.HikariDataSource) blocked.connections()).getDriverClassName())
                    .isEqualTo(BlockableDriver.class.getName());
            assertThat(servedByFreshSessions(blockable, 6))
                    .as("both standbys serve before the block (%s)", routingState(blockable))
                    .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
            // A check of standby 1 that answers after this instant: the last one that answers is no older.
            final long checkedFrom = System.nanoTime();
            runtime(blockable).checkReplicasNow();
            BlockableDriver.block(cluster.standby(1).jdbcUrl());
            final long blockedAt = System.nanoTime();
            final long deadline = blockedAt + Duration.ofSeconds(30).toNanos();
            Set<Node> served = servedByFreshSessions(blockable, 4);
            while (!served.equals(Set.of(cluster.standby(2)))) {
                assertThat(System.nanoTime())
                        .as(
                                "standby 1, whose lag is no longer known, gets no reads within 30 s (served by %s; %s)",
                                served, routingState(blockable))
                        .isLessThan(deadline);
                pause();
                served = servedByFreshSessions(blockable, 4);
            }
            final Duration sinceCheck = Duration.ofNanos(System.nanoTime() - checkedFrom);
            System.out.printf(
                    "standby 1 got no more reads %d ms after its health check was blocked, %d ms after the last"
                            + " check run by the test (the bound: 1 s)%n",
                    Duration.ofNanos(System.nanoTime() - blockedAt).toMillis(), sinceCheck.toMillis());
            assertThat(blocked.ineligibility(AGE_RULE, Lsn.UNKNOWN))
                    .as("the library judges standby 1's lag unknown (%s)", routingState(blockable))
                    .isEqualTo(ReplicaNode.Ineligibility.LAG_UNKNOWN);
            assertThat(RoutingStatus.of(blockable).nodes().get(1).up())
                    .as("standby 1 is not down: its check hangs, it has not failed (%s)", routingState(blockable))
                    .isTrue();
            assertThat(sinceCheck)
                    .as("the lag data went stale only once it was older than the bound, not at the block")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        } finally {
            BlockableDriver.unblockAll();
        }
    }

    private static void pause() {
        try {
            Thread.sleep(20); // the poll interval of the bounded wait for standby 1 to get no reads
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within 30 s").isLessThan(deadline);
            try {
                Thread.sleep(20); // the poll interval
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
