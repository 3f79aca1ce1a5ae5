package io.github.hibernaterouting.it;

import static io.github.hibernaterouting.it.ItSupport.awaitReplicaDown;
import static io.github.hibernaterouting.it.ItSupport.causeChainHas;
import static io.github.hibernaterouting.it.ItSupport.emf;
import static io.github.hibernaterouting.it.ItSupport.executionsInLog;
import static io.github.hibernaterouting.it.ItSupport.isConnectionFailure;
import static io.github.hibernaterouting.it.ItSupport.messages;
import static io.github.hibernaterouting.it.ItSupport.nodesServing;
import static io.github.hibernaterouting.it.ItSupport.pause;
import static io.github.hibernaterouting.it.ItSupport.sqlState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp;
import static io.github.hibernaterouting.testing.RoutingTestSupport.longOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariConfigMXBean;
import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Faults injected into real servers while the library serves traffic (docs/guarantees.md, "Failures are skipped…"): a standby SIGKILLed under
 * load, the primary restarted, Redis SIGKILLed, a statement cancelled by {@code statement_timeout}.
 * What the caller sees is checked (SQLSTATEs, messages, which server answered), and what the servers
 * ran is counted in their logs ({@code log_statement=all}). The extension starts stopped or killed
 * servers again and waits for the standbys to catch up after each test.
 */
@ExtendWith(RoutingLeakCheck.class)
class FaultIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2)
            .withRedis()
            .configure(builder -> builder.serverSetting("log_statement", "all"));

    private static final int REPLICA_POOL_SIZE = 5;

    static PostgresCluster cluster;
    static RedisServer redis;
    static ExecutorService executor;

    @BeforeAll
    static void createSchema() throws SQLException {
        cluster = DB.cluster();
        redis = DB.redis();
        onPrimary(cluster, "create table fault_rows (id bigserial primary key, writer int not null, seq int not null)");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        executor = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stopExecutor() {
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    /** One read of the load, with when it started and who answered or how it failed. */
    private record Read(long startNanos, Node node, String sqlState) {}

    private static void insertRow(EntityManagerFactory emf, int writer, int seq) {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.createNativeQuery("insert into fault_rows (writer, seq) values (?, ?)")
                    .setParameter(1, writer)
                    .setParameter(2, seq)
                    .executeUpdate();
            em.getTransaction().commit();
        }
    }

    private static Read read(EntityManagerFactory emf) {
        final long start = System.nanoTime();
        try (EntityManager em = emf.createEntityManager()) {
            final Object[] row = (Object[]) em.createNativeQuery("select count(*), inet_server_port() from fault_rows")
                    .getSingleResult();
            return new Read(start, cluster.nodeForPort(((Number) row[1]).intValue()), null);
        } catch (RuntimeException e) {
            return new Read(start, null, sqlState(e));
        }
    }

    /**
     * The settings of a persistence unit that shares Redis with another, with a marker window of {@code window}
     * and a lag bound no test reaches, so that paused standbys stay eligible ({@code 0} would still judge lag
     * data older than 1 s unknown, which a busy machine's late health check can make it).
     */
    private static Map<String, Object> sharedRedisUnit(Duration window) {
        return Map.of(
                RoutingSettings.REDIS_URI,
                redis.uri(),
                RoutingSettings.MAX_REPLICA_LAG,
                "1h",
                RoutingSettings.REDIS_WINDOW,
                window.toSeconds() + "s",
                RoutingSettings.REDIS_ALLOW_SHORT_WINDOW,
                "true");
    }

    /**
     * The servers that served a batch of 10 reads: the first batch that satisfies {@code expected}, or the last one
     * after 30 s, and the longest any batch took. A restarted server answers its first health check while a standby
     * may still be replaying what the primary wrote meanwhile; until a check finds it usable it is rightly not used.
     */
    private static Served awaitServing(EntityManagerFactory emf, Predicate<Set<Node>> expected) {
        final long start = System.nanoTime();
        final long deadline = start + Duration.ofSeconds(30).toNanos();
        long slowest = 0;
        Set<Node> nodes;
        boolean first = true;
        while (true) {
            final long batch = System.nanoTime();
            nodes = nodesServing(cluster, emf, 10);
            slowest = Math.max(slowest, System.nanoTime() - batch);
            if (expected.test(nodes) || System.nanoTime() > deadline) {
                break;
            }
            if (first) {
                // Why not yet, for the log: each node's health and lag, and the latest routing decisions.
                final RoutingStatus status = RoutingStatus.of(emf);
                System.out.printf(
                        "first batch served by %s; nodes %s; latest decisions %s%n",
                        nodes,
                        status.nodes(),
                        status.decisions().stream().limit(10).toList());
                first = false;
            }
            pause(50);
        }
        final Served served = new Served(nodes, Duration.ofNanos(slowest));
        System.out.printf(
                "served by %s after %d ms; slowest batch of 10 reads %d ms%n",
                nodes,
                Duration.ofNanos(System.nanoTime() - start).toMillis(),
                served.slowestBatch().toMillis());
        return served;
    }

    /** What {@link #awaitServing} saw. */
    private record Served(Set<Node> nodes, Duration slowestBatch) {}

    private static Set<Node> nodesServingActor(EntityManagerFactory emf, String actor, int reads) {
        final Set<Node> nodes = new HashSet<>();
        for (int i = 0; i < reads; i++) {
            try (RoutingScope ignored = RoutingScope.builder().actor(actor).open();
                    EntityManager em = emf.createEntityManager()) {
                nodes.add(servedBy(cluster, em));
            }
        }
        return nodes;
    }

    /** How many of {@code reads} each server answered, and how many failed with which SQLSTATE. */
    private static Map<String, Long> served(Collection<Read> reads) {
        return reads.stream()
                .collect(Collectors.groupingBy(
                        r -> r.node() != null ? r.node().name() : "failed " + r.sqlState(),
                        TreeMap::new,
                        Collectors.counting()));
    }

    /** The count of the meter {@code name} for {@code node}, 0 while it does not exist. */
    private static double meterSum(SimpleMeterRegistry meters, String name, String node) {
        return meters.find(name).tag("node", node).counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }

    /** How often replica {@code node} failed to give a connection (a busy pool is not counted). */
    private static double replicaFailures(SimpleMeterRegistry meters, String node) {
        return meterSum(meters, "hibernate.routing.replica.failures", node);
    }

    /**
     * The configuration of the primary's pool (HikariCP, which the library built for the URL), as Hibernate's
     * connection provider, the library's, hands out its primary data source.
     */
    private static HikariConfigMXBean primaryPool(EntityManagerFactory emf) throws SQLException {
        return emf.unwrap(SessionFactoryImplementor.class)
                .getServiceRegistry()
                .requireService(MultiTenantConnectionProvider.class)
                .unwrap(DataSource.class)
                .unwrap(HikariConfigMXBean.class);
    }

    @Test
    void
            standbyKilledUnderLoad_losesNoAcknowledgedWrite_failsOnlyReadsOnItsDeadConnections_readsFallBack_andItIsUsedAgainOnceStarted()
                    throws Exception {
        final Node victim = cluster.standby(1);
        final Node survivor = cluster.standby(2);
        final long rowsBefore = longOnPrimary(cluster, "select count(*) from fault_rows");
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory emf = emf(
                cluster, Map.of(RoutingSettings.REPLICA_FAILURE, "FALLBACK", RoutingSettings.METER_REGISTRY, meters));
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicLong acknowledged = new AtomicLong();
        final ConcurrentLinkedQueue<String> writeErrors = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Read> reads = new ConcurrentLinkedQueue<>();
        final List<Future<?>> load = new ArrayList<>();
        try (emf) {
            for (int w = 0; w < 2; w++) {
                final int writer = w;
                load.add(executor.submit(() -> {
                    for (int seq = 0; running.get(); seq++) {
                        try {
                            insertRow(emf, writer, seq);
                            acknowledged.incrementAndGet();
                        } catch (RuntimeException e) {
                            writeErrors.add(messages(e));
                        }
                    }
                }));
            }
            for (int r = 0; r < 3; r++) {
                load.add(executor.submit(() -> {
                    while (running.get()) {
                        reads.add(read(emf));
                    }
                }));
            }
            final long killedAt;
            final long settledAt;
            try {
                final long warmUpDeadline =
                        System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (reads.stream().filter(r -> victim.equals(r.node())).count() < 20) {
                    if (System.nanoTime() > warmUpDeadline) {
                        throw new AssertionError("the victim served fewer than 20 reads in 30 s before the kill; reads "
                                + served(reads) + "; " + routingState(emf));
                    }
                    pause(10);
                }
                killedAt = System.nanoTime();
                cluster.kill(victim);
                // The health check (every 100 ms) takes the victim out: its breaker opens, its pooled connections go.
                // From the moment the persistence unit reports it down, no read can choose it, so none may fail.
                awaitReplicaDown(emf, "replica1");
                settledAt = System.nanoTime();
                // The load goes on for the fault's 5 s (pacing), and until 20 reads that started after that point
                // were answered.
                final long loadDeadline = settledAt + Duration.ofSeconds(30).toNanos();
                while (System.nanoTime() < killedAt + Duration.ofSeconds(5).toNanos()
                        || reads.stream()
                                        .filter(r -> r.startNanos() > settledAt && r.node() != null)
                                        .count()
                                <= 20) {
                    if (System.nanoTime() > loadDeadline) {
                        throw new AssertionError("fewer than 21 reads answered in 30 s after the victim was reported"
                                + " down; reads since then "
                                + served(reads.stream()
                                        .filter(r -> r.startNanos() > settledAt)
                                        .toList())
                                + "; " + routingState(emf));
                    }
                    pause(20);
                }
            } finally {
                running.set(false);
                for (Future<?> f : load) {
                    f.get(60, TimeUnit.SECONDS);
                }
            }

            final List<Read> failed =
                    reads.stream().filter(r -> r.sqlState() != null).toList();
            final List<Read> afterSettling =
                    reads.stream().filter(r -> r.startNanos() > settledAt).toList();
            System.out.printf(
                    "standby kill: %d acknowledged writes, %d write errors, %d reads, %d failed %s, reported down"
                            + " %d ms after the kill, %d reads after that served by %s%n",
                    acknowledged.get(),
                    writeErrors.size(),
                    reads.size(),
                    failed.size(),
                    failed.stream().collect(Collectors.groupingBy(Read::sqlState, TreeMap::new, Collectors.counting())),
                    TimeUnit.NANOSECONDS.toMillis(settledAt - killedAt),
                    afterSettling.size(),
                    served(afterSettling));

            assertThat(writeErrors)
                    .as("writes go to the primary, which stayed up")
                    .isEmpty();
            assertThat(longOnPrimary(cluster, "select count(*) from fault_rows") - rowsBefore)
                    .as("every acknowledged write is on the primary")
                    .isEqualTo(acknowledged.get());
            assertThat(failed)
                    .as("only connection failures, from statements on the killed standby")
                    .allSatisfy(r -> assertThat(isConnectionFailure(r.sqlState()))
                            .as(r.sqlState())
                            .isTrue());
            assertThat(failed)
                    .as(
                            "at most one failed read per pooled connection to the killed standby (the library does not re-run them)")
                    .hasSizeLessThanOrEqualTo(REPLICA_POOL_SIZE);
            assertThat(failed)
                    .as("no read that started after the persistence unit reported the standby down fails")
                    .allSatisfy(r -> assertThat(r.startNanos()).isLessThanOrEqualTo(settledAt));
            assertThat(afterSettling)
                    .as("reads keep being served after the kill")
                    .hasSizeGreaterThan(20);
            assertThat(afterSettling)
                    .as("FALLBACK: the other standby (or the primary) serves them")
                    .allSatisfy(r -> assertThat(r.node()).isIn(survivor, cluster.primary()));

            cluster.start(victim);
            awaitReplicasUp(emf);
            final double failuresBefore = replicaFailures(meters, "replica1");
            final Served back = awaitServing(emf, nodes -> nodes.contains(victim));
            final double failuresAfterRestart = replicaFailures(meters, "replica1") - failuresBefore;
            System.out.printf(
                    "after the restart: %.0f failures of replica1 to give a connection, %.0f busy; %s%n",
                    failuresAfterRestart,
                    meterSum(meters, "hibernate.routing.replica.busy", "replica1"),
                    routingState(emf));
            assertThat(back.nodes())
                    .as("the restarted standby is used again, by the same persistence unit: %s", routingState(emf))
                    .contains(victim);
            // Its pool (HikariCP) retries a dead server with a backoff of up to 5 s. Had the library taken the standby
            // back before its pool could connect again, a read that took it would have waited the whole replica
            // connection timeout (1 s), failed to get a connection (counted by this meter) and fallen back.
            assertThat(failuresAfterRestart)
                    .as(
                            "reads that took the restarted standby after the persistence unit reported it up again and"
                                    + " could not get a connection from its pool (hibernate.routing.replica.failures;"
                                    + " slowest batch of 10 reads %d ms): %s",
                            back.slowestBatch().toMillis(), routingState(emf))
                    .isZero();
        }
    }

    @Test
    void readInFlightOnKilledStandby_failsWithConnectionError_andIsNotRerunOnAnotherServer() throws Exception {
        final Node victim = cluster.standby(2);
        final String tag = "tag-" + UUID.randomUUID();
        final EntityManagerFactory emf = emf(cluster, Map.of(RoutingSettings.REPLICA_FAILURE, "FALLBACK"));
        try (emf) {
            final Future<String> outcome = executor.submit(() -> {
                for (int attempt = 0; attempt < 20; attempt++) {
                    try (EntityManager em = emf.createEntityManager()) {
                        // The unit of work keeps its replica, so the slow read runs where servedBy ran.
                        if (!victim.equals(servedBy(cluster, em))) {
                            continue;
                        }
                        try {
                            em.createNativeQuery("select /* " + tag + " */ pg_sleep(30)")
                                    .getSingleResult();
                            return "completed";
                        } catch (RuntimeException e) {
                            return sqlState(e);
                        }
                    }
                }
                return "never routed to " + victim;
            });
            awaitRunning(victim, tag);
            final long killedAt = System.nanoTime();
            cluster.kill(victim);
            // Longer than the 30 s sleep: a read re-run elsewhere would complete, and say so.
            final String state = outcome.get(60, TimeUnit.SECONDS);
            final long failedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            System.out.printf(
                    "in-flight read on killed %s: SQLSTATE %s after %d ms%n", victim, state, failedAfterMillis);

            // A connection failure (not "completed") means it failed because the server died, not after its sleep.
            assertThat(isConnectionFailure(state))
                    .as("the caller sees a connection failure, not %s", state)
                    .isTrue();
            assertThat(executionsInLog(victim, tag))
                    .as("it ran on the killed standby")
                    .isEqualTo(1);
            assertThat(executionsInLog(cluster.primary(), tag) + executionsInLog(cluster.standby(1), tag))
                    .as("it was not re-run on another server")
                    .isZero();
        }
    }

    /** Waits until {@code node} runs a statement containing {@code tag}, by its {@code pg_stat_activity}. */
    private static void awaitRunning(Node node, String tag) throws SQLException {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        try (Connection c = cluster.adminConnection(node);
                PreparedStatement s =
                        c.prepareStatement("select count(*) from pg_stat_activity where pid <> pg_backend_pid() "
                                + "and state = 'active' and strpos(query, ?) > 0")) {
            s.setString(1, tag);
            while (true) {
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) > 0) {
                        return;
                    }
                }
                assertThat(System.nanoTime())
                        .as("%s never started running the tagged read", node)
                        .isLessThan(deadline);
                pause(10);
            }
        }
    }

    @Test
    void
            primaryStopped_writesFailFastNamingTheRefusedServer_readsStayOnStandbys_andAllRecoverWithTheSamePersistenceUnit()
                    throws Exception {
        final Node primary = cluster.primary();
        final EntityManagerFactory emf = emf(cluster, Map.of(RoutingSettings.PRIMARY_CONNECTION_TIMEOUT, "1s"));
        try (emf) {
            insertRow(emf, 100, 0);
            final long rowsBefore = longOnPrimary(cluster, "select count(*) from fault_rows");
            cluster.stop(primary);
            final List<String> downMessages = new ArrayList<>();
            final List<Throwable> downFailures = new ArrayList<>();
            try {
                for (int attempt = 1; attempt <= 3; attempt++) {
                    final long start = System.nanoTime();
                    final Throwable failure = catchThrowable(() -> insertRow(emf, 100, 1));
                    final long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    assertThat(failure)
                            .as("a write while the primary is down fails")
                            .isNotNull();
                    assertThat(isConnectionFailure(sqlState(failure)))
                            .as("SQLSTATE %s of %s", sqlState(failure), messages(failure))
                            .isTrue();
                    System.out.printf("write %d while the primary is down failed after %d ms%n", attempt, tookMillis);
                    downFailures.add(failure);
                    downMessages.add(messages(failure));
                }
                // The first write may still get a pooled connection that the stop killed; by the last one the pool has
                // none and waits for a new one, which the stopped server refuses, until its connection timeout.
                final Throwable last = downFailures.get(downFailures.size() - 1);
                assertThat(causeChainHas(last, SQLTransientConnectionException.class))
                        .as("the last write failed at the pool's connection timeout: %s", messages(last))
                        .isTrue();
                assertThat(primaryPool(emf).getConnectionTimeout())
                        .as("the primary pool's connection timeout: the 1 s it was given, not the default 30 s")
                        .isEqualTo(1_000);
                assertThat(downMessages.get(downMessages.size() - 1))
                        .as("the message names the server that refused")
                        .contains("Connection to " + primary.host() + ":" + primary.port() + " refused");
                assertThat(nodesServing(cluster, emf, 4))
                        .as("reads need no primary")
                        .doesNotContain(primary);
            } finally {
                cluster.start(primary);
            }
            System.out.println("primary down, last write error: " + downMessages.get(downMessages.size() - 1));

            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            int recoveryErrors = 0;
            while (true) {
                final Throwable failure = catchThrowable(() -> insertRow(emf, 100, 2));
                if (failure == null) {
                    break;
                }
                recoveryErrors++;
                assertThat(isConnectionFailure(sqlState(failure)))
                        .as("only connection failures while reconnecting: %s", messages(failure))
                        .isTrue();
                assertThat(System.nanoTime())
                        .as("writes work again after the primary started: %s", messages(failure))
                        .isLessThan(deadline);
                pause(50);
            }
            for (int i = 0; i < 5; i++) {
                insertRow(emf, 100, 3 + i);
            }
            System.out.println(
                    "primary restart: " + recoveryErrors + " failed writes after the start, then 6 in a row succeeded");
            assertThat(longOnPrimary(cluster, "select count(*) from fault_rows") - rowsBefore)
                    .as("nothing written while down, 6 rows after")
                    .isEqualTo(6);
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            awaitReplicasUp(emf);
            assertThat(awaitServing(emf, nodes -> !nodes.contains(primary)).nodes())
                    .as("reads use the standbys again")
                    .doesNotContain(primary);
        }
    }

    @Test
    void redisKilled_actorReadsUsePrimary_actorMutationsAreRefusedBeforeAnySql_andBothRecoverAfterRestart()
            throws Exception {
        final Node primary = cluster.primary();
        final String actor = "redis-actor-" + UUID.randomUUID();
        final EntityManagerFactory emf = emf(cluster, RoutingTestSupport.redisWithShortWindow(redis.uri(), "1s"));
        try (emf) {
            // A Redis that has just started has no data: for one window (1 s here) actors read from the primary.
            awaitActorReadsOnStandbys(emf, actor, Duration.ofSeconds(1));
            redis.kill();
            final String tag = "tag-" + UUID.randomUUID();
            final long rowsBefore = longOnPrimary(cluster, "select count(*) from fault_rows");
            try {
                assertThat(nodesServingActor(emf, actor, 4))
                        .as("marker unreadable: the actor's reads use the primary")
                        .containsExactly(primary);
                final Throwable refused = catchThrowable(() -> {
                    try (RoutingScope ignored =
                                    RoutingScope.builder().actor(actor).open();
                            EntityManager em = emf.createEntityManager()) {
                        em.getTransaction().begin();
                        em.createNativeQuery("insert /* " + tag + " */ into fault_rows (writer, seq) values (200, 0)")
                                .executeUpdate();
                        em.getTransaction().commit();
                    }
                });
                assertThat(refused).as("the mutation is refused").isNotNull();
                assertThat(causeChainHas(refused, ConsistencyMarkerException.class))
                        .as(messages(refused))
                        .isTrue();
                assertThat(executionsInLog(primary, tag))
                        .as("the refused insert never reached the primary")
                        .isZero();
                assertThat(longOnPrimary(cluster, "select count(*) from fault_rows"))
                        .as("no row")
                        .isEqualTo(rowsBefore);
                assertThat(nodesServing(cluster, emf, 4))
                        .as("reads without an actor need no marker")
                        .doesNotContain(primary);
            } finally {
                redis.restart();
            }

            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (true) {
                final Throwable failure = catchThrowable(() -> {
                    try (RoutingScope ignored =
                            RoutingScope.builder().actor(actor).open()) {
                        insertRow(emf, 200, 1);
                    }
                });
                if (failure == null) {
                    break;
                }
                assertThat(causeChainHas(failure, ConsistencyMarkerException.class))
                        .as(messages(failure))
                        .isTrue();
                assertThat(System.nanoTime())
                        .as("mutations work again after Redis restarts: %s", messages(failure))
                        .isLessThan(deadline);
                pause(50);
            }
            assertThat(longOnPrimary(cluster, "select count(*) from fault_rows"))
                    .as("the mutation after recovery")
                    .isEqualTo(rowsBefore + 1);
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            // The restarted Redis lost its data: one window on the primary, then standbys again.
            awaitActorReadsOnStandbys(emf, actor, Duration.ofSeconds(1));
        }
    }

    /**
     * Waits (bounded: 30 s after {@code window}, the persistence unit's Redis window) until the actor's reads are
     * served by standbys only.
     */
    private static void awaitActorReadsOnStandbys(EntityManagerFactory emf, String actor, Duration window) {
        final long deadline =
                System.nanoTime() + window.plus(Duration.ofSeconds(30)).toNanos();
        Set<Node> nodes;
        while ((nodes = nodesServingActor(emf, actor, 4)).contains(cluster.primary())) {
            assertThat(System.nanoTime())
                    .as(
                            "the actor reads from standbys once the window is over; served by %s; %s",
                            nodes, routingState(emf))
                    .isLessThan(deadline);
            pause(100);
        }
    }

    @Test
    void readCancelledByStatementTimeout_reachesCallerAs57014_andRunsExactlyOnce() throws Exception {
        final String timeout = "?options=-c%20statement_timeout%3D200";
        final EntityManagerFactory emf = emf(
                cluster,
                Map.of(
                        RoutingSettings.REPLICA_URLS,
                        cluster.standbys().stream()
                                .map(n -> n.jdbcUrl() + timeout)
                                .collect(Collectors.joining(","))));
        try (emf) {
            awaitReplicasUp(emf);
            assertThat(nodesServing(cluster, emf, 4))
                    .as("fast reads still run on the standbys")
                    .doesNotContain(cluster.primary());

            final String autoCommitTag = "tag-" + UUID.randomUUID();
            final long start = System.nanoTime();
            final Throwable outside = catchThrowable(() -> {
                try (EntityManager em = emf.createEntityManager()) {
                    em.createNativeQuery("select /* " + autoCommitTag + " */ pg_sleep(2)")
                            .getSingleResult();
                }
            });
            final long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.printf("the cancelled read failed after %d ms%n", tookMillis);
            // 57014 (not a result) says it was cancelled, not run to the end; the server logs say it ran once.
            assertThat(outside).as("cancelled, not run to the end").isNotNull();
            assertThat(sqlState(outside)).as(messages(outside)).isEqualTo("57014");
            assertExecutedOnceOnAStandby(autoCommitTag);

            final String transactionTag = "tag-" + UUID.randomUUID();
            final Throwable inside = catchThrowable(() -> {
                try (EntityManager em = emf.createEntityManager()) {
                    em.getTransaction().begin();
                    try {
                        em.createNativeQuery("select /* " + transactionTag + " */ pg_sleep(2)")
                                .getSingleResult();
                    } finally {
                        em.getTransaction().rollback();
                    }
                }
            });
            assertThat(inside).isNotNull();
            assertThat(sqlState(inside)).as(messages(inside)).isEqualTo("57014");
            assertExecutedOnceOnAStandby(transactionTag);
        }
    }

    private static void assertExecutedOnceOnAStandby(String tag) throws IOException {
        long total = 0;
        long onStandbys = 0;
        for (Node node : cluster.nodes()) {
            final long executions = executionsInLog(node, tag);
            total += executions;
            onStandbys += node.isPrimary() ? 0 : executions;
        }
        assertThat(total).as("executions of %s in all server logs", tag).isEqualTo(1);
        assertThat(onStandbys).as("it ran on a standby").isEqualTo(1);
    }

    /**
     * Read-your-writes through "any application instance": the marker is the only thing that carries the actor's stamp
     * to another instance. Redis restarted without its data (no persistence, a failover to an empty
     * replica, an eviction) loses it while both standbys still lack the write.
     */
    @Test
    void redisRestartedWithoutItsData_anotherInstanceStillReadsTheActorsWrite() {
        final String actor = "marker-actor-" + UUID.randomUUID();
        final int seq = (int) (System.nanoTime() & 0x3fffffff);
        // Paused standbys stay eligible (a lag bound no test reaches), so only the actor's stamp keeps the actor off
        // them. The
        // actor's marker is lost with Redis's data, and the standbys lack its write for longer than a window: the
        // library keeps the actor on the primary for one window after B reconnects, long enough for B's reads below.
        final Map<String, Object> shared = sharedRedisUnit(Duration.ofSeconds(30));
        final EntityManagerFactory instanceA = emf(cluster, shared);
        final EntityManagerFactory instanceB = emf(cluster, shared);
        try (instanceA;
                instanceB) {
            awaitMarkerStorable(instanceA);
            awaitMarkerStorable(instanceB);
            cluster.standbys().forEach(cluster::pauseReplay);
            try (RoutingScope ignored = RoutingScope.builder().actor(actor).open()) {
                insertRow(instanceA, 300, seq);
            }
            assertThat(actorSeesRow(instanceB, actor, seq))
                    .as("before: B reads the write through the marker")
                    .isTrue();
            redis.restart();
            // Until B has reconnected, its marker reads fail and send the actor to the primary; wait for that to
            // end.
            awaitMarkerStorable(instanceB);
            assertThat(nodesServing(cluster, instanceB, 4))
                    .as("B reads from the paused standbys when nothing forbids it")
                    .doesNotContain(cluster.primary());
            assertThat(actorSeesRow(instanceB, actor, seq))
                    .as("after Redis came back empty, B must still read the actor's write")
                    .isTrue();
        }
    }

    /**
     * A Redis restored from a backup (an RDB file), or failed over to a replica that was behind, keeps
     * {@code <prefix>:alive} but lost the markers written since: here the actor's. It is another Redis
     * process, with another {@code run_id}; instance B must notice and send the actor to the primary
     * for one window, and not to a standby that lacks the actor's write.
     */
    @Test
    void redisRestoredFromAnOlderSnapshot_anotherInstanceStillReadsTheActorsWrite() throws Exception {
        final String actor = "restored-actor-" + UUID.randomUUID();
        final int seq = (int) (System.nanoTime() & 0x3fffffff);
        // Paused standbys stay eligible (a lag bound no test reaches), so only the actor's stamp keeps the actor off
        // them. The
        // checks after the restore must run within the one window it starts: a long one, whatever the machine's speed.
        final Duration window = Duration.ofSeconds(20);
        final Map<String, Object> shared = sharedRedisUnit(window);
        final EntityManagerFactory instanceA = emf(cluster, shared);
        final EntityManagerFactory instanceB = emf(cluster, shared);
        try (instanceA;
                instanceB;
                RedisClient client = RedisClient.create(redis.uri())) {
            awaitMarkerStorable(instanceA);
            awaitMarkerStorable(instanceB);
            // Whatever start-up window this Redis began is over before the backup: the backup's alive key is old.
            awaitActorReadsOnStandbys(instanceB, "probe-" + UUID.randomUUID(), window);
            final Path backup = redis.snapshot();

            cluster.standbys().forEach(cluster::pauseReplay);
            try (RoutingScope ignored = RoutingScope.builder().actor(actor).open()) {
                insertRow(instanceA, 300, seq);
            }
            assertThat(actorSeesRow(instanceB, actor, seq))
                    .as("before: B reads the write through the marker")
                    .isTrue();

            redis.restartFrom(backup);
            awaitMarkerStorable(instanceB);
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                assertThat(connection.sync().exists("hibernate-routing:alive"))
                        .as("the restore kept the alive key")
                        .isEqualTo(1L);
                assertThat(connection.sync().exists("hibernate-routing:replication:" + actor))
                        .as("the restore lost the actor's marker")
                        .isZero();
            }
            assertThat(actorSeesRow(instanceB, actor, seq))
                    .as("after Redis was restored from an older snapshot, B must still read the actor's write")
                    .isTrue();
            assertThat(nodesServingActor(instanceB, actor, 4))
                    .as("for one window after the restore, the actor reads from the primary")
                    .containsExactly(cluster.primary());
        }
    }

    /** Waits until {@code emf} can store a marker (of a throwaway actor), i.e. its Redis connection works. */
    private static void awaitMarkerStorable(EntityManagerFactory emf) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        Throwable failure;
        while ((failure = catchThrowable(() -> ReadYourWrites.beforeMutation(emf, "probe-" + UUID.randomUUID())))
                != null) {
            assertThat(System.nanoTime())
                    .as(
                            "the persistence unit reaches Redis (Redis running: %s): %s",
                            redis.isRunning(), messages(failure))
                    .isLessThan(deadline);
            pause(50);
        }
    }

    private static boolean actorSeesRow(EntityManagerFactory emf, String actor, int seq) {
        try (RoutingScope ignored = RoutingScope.builder().actor(actor).open();
                EntityManager em = emf.createEntityManager()) {
            final Object[] row = (Object[]) em.createNativeQuery(
                            "select count(*), inet_server_port() from fault_rows where writer = 300 and seq = ?")
                    .setParameter(1, seq)
                    .getSingleResult();
            System.out.printf(
                    "%s read %s matching rows, served by %s%n",
                    actor, row[0], cluster.nodeForPort(((Number) row[1]).intValue()));
            return ((Number) row[0]).longValue() == 1;
        }
    }

    /**
     * docs/read-your-writes.md, "What each failure does": when the commit position cannot be read after
     * a commit, "the commit is still reported as committed". Reading it is made to fail by revoking
     * the function the library uses ({@code pg_current_wal_insert_lsn()}) from the application role.
     */
    @Test
    void commitPositionUnreadableAfterCommit_writeIsStillReportedCommitted_andTheActorReadsFromThePrimary()
            throws Exception {
        final String actor = "position-actor-" + UUID.randomUUID();
        final int seq = (int) (System.nanoTime() & 0x3fffffff);
        final EntityManagerFactory emf = emf(cluster, Map.of());
        try (emf;
                Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement()) {
            s.execute("revoke execute on function pg_current_wal_insert_lsn() from public");
            final Throwable failure;
            try {
                failure = catchThrowable(() -> {
                    try (RoutingScope ignored =
                            RoutingScope.builder().actor(actor).open()) {
                        insertRow(emf, 301, seq);
                    }
                });
            } finally {
                s.execute("grant execute on function pg_current_wal_insert_lsn() to public");
            }
            assertThat(longOnPrimary(cluster, "select count(*) from fault_rows where writer = 301 and seq = " + seq))
                    .as("the row is committed")
                    .isEqualTo(1);
            assertThat(failure)
                    .as("the caller is told it committed: %s", failure == null ? "" : messages(failure))
                    .isNull();
            assertThat(nodesServingActor(emf, actor, 2))
                    .as("the actor reads from the primary on this instance")
                    .containsExactly(cluster.primary());
        }
    }

    @Test
    void killedStandby_isReportedDownInRoutingStatus_andUpAgainAfterStart() {
        final Node victim = cluster.standby(1);
        final EntityManagerFactory emf = emf(cluster, Map.of());
        try (emf) {
            awaitReplicasUp(emf);
            cluster.kill(victim);
            awaitReplicaDown(emf, "replica1");
            assertThat(nodesServing(cluster, emf, 6))
                    .as("reads skip it")
                    .doesNotContain(victim)
                    .isNotEmpty();
            cluster.start(victim);
            awaitReplicasUp(emf);
            assertThat(awaitServing(emf, nodes -> nodes.contains(victim)).nodes())
                    .contains(victim);
        }
    }
}
