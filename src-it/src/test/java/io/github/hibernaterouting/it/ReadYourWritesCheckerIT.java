package io.github.hibernaterouting.it;

import static io.github.hibernaterouting.it.ItSupport.emf;
import static io.github.hibernaterouting.it.ItSupport.pause;
import static io.github.hibernaterouting.it.ItSupport.sqlState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.it.History.Kind;
import io.github.hibernaterouting.it.History.Op;
import io.github.hibernaterouting.it.History.Violation;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.RedisServer;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Read-your-writes, no lost increment and monotonic reads in a unit of work (docs/guarantees.md), checked over
 * a recorded history while 32 actors work concurrently and a fault thread pauses and resumes replay
 * on the standbys at random and once stops and starts one. See {@link History} for the checks and
 * docs/verification.md for how to read the output. The seed is printed; {@code -Dit.seed=…} repeats a run.
 */
@ExtendWith(RoutingLeakCheck.class)
class ReadYourWritesCheckerIT {
    @RegisterExtension
    static final PostgresClusterExtension DB =
            PostgresClusterExtension.withStandbys(2).withRedis();

    private static final int ACTORS = 32;
    /**
     * The reads replicas must have served for a run to have tested them at all. A count the workload runs until it is
     * reached (not a share, which moves with where the pauses fall and how fast the standbys replay).
     */
    private static final int MIN_REPLICA_READS = 50;

    static PostgresCluster cluster;
    static RedisServer redis;

    /** How the application is deployed: where an actor's stamp must travel for its next read. */
    enum Deployment {
        /** One persistence unit; stamps in its memory. */
        ONE_INSTANCE,
        /** Two persistence units (two application instances), each operation on a random one; stamps shared through the Redis marker. */
        TWO_INSTANCES_SHARING_REDIS
    }

    @BeforeAll
    static void createSchema() throws SQLException {
        cluster = DB.cluster();
        redis = DB.redis();
        onPrimary(cluster, "create table counters (actor text primary key, value bigint not null)");
    }

    private static long seed() {
        final String given = System.getProperty("it.seed");
        return given == null || given.isBlank() ? System.nanoTime() : Long.parseLong(given.trim());
    }

    private static String key(int actor) {
        return "actor-" + actor;
    }

    private static void resetCounters() throws SQLException {
        onPrimary(cluster, "truncate counters");
        onPrimary(
                cluster,
                "insert into counters select 'actor-' || i, 0 from generate_series(0, " + (ACTORS - 1) + ") i");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    private static long[] finalValues() throws SQLException {
        final long[] values = new long[ACTORS];
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("select actor, value from counters")) {
            while (rs.next()) {
                values[Integer.parseInt(rs.getString(1).substring("actor-".length()))] = rs.getLong(2);
            }
        }
        return values;
    }

    /**
     * The workload of one run: which persistence units, which strategy the actors' scopes name, how many ops, and
     * after them, while {@code more} says so, more of the same (drawn from the same seeded sequence).
     */
    private record Workload(
            List<EntityManagerFactory> instances,
            Strategy strategy,
            int actors,
            int minOps,
            int maxOps,
            long seed,
            BooleanSupplier more) {}

    /**
     * How long after the start the actors may still go on past their own operations while {@link Workload#more} asks
     * for more: a bound for a run whose condition never comes (its assertions then say which).
     */
    private static final Duration MORE_AT_MOST = Duration.ofSeconds(120);

    private static final AtomicLong UNITS = new AtomicLong();

    private static void write(History history, EntityManagerFactory emf, Workload workload, int actor) {
        final long start = System.nanoTime();
        try (RoutingScope ignored = RoutingScope.builder()
                        .actor(key(actor))
                        .strategy(workload.strategy())
                        .open();
                EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            try {
                final Object[] row =
                        (Object[]) em.createNativeQuery("update counters set value = value + 1 where actor = ? "
                                        + "returning value, inet_server_port()")
                                .setParameter(1, key(actor))
                                .getSingleResult();
                em.getTransaction().commit();
                history.record(new Op(
                        actor,
                        Kind.WRITE,
                        UNITS.incrementAndGet(),
                        actor,
                        ((Number) row[0]).longValue(),
                        cluster.nodeForPort(((Number) row[1]).intValue()),
                        start,
                        System.nanoTime(),
                        null));
            } finally {
                if (em.getTransaction().isActive()) {
                    em.getTransaction().rollback();
                }
            }
        } catch (RuntimeException e) {
            history.record(new Op(
                    actor,
                    Kind.WRITE,
                    UNITS.incrementAndGet(),
                    actor,
                    -1,
                    null,
                    start,
                    System.nanoTime(),
                    sqlState(e)));
        }
    }

    /** One unit of work of {@code actor} that reads {@code row}'s counter {@code reads} times. */
    private static void readUnit(
            History history, EntityManagerFactory emf, Workload workload, int actor, int row, Kind kind, int reads) {
        final long unit = UNITS.incrementAndGet();
        try (RoutingScope ignored = RoutingScope.builder()
                        .actor(key(actor))
                        .strategy(workload.strategy())
                        .open();
                EntityManager em = emf.createEntityManager()) {
            for (int i = 0; i < reads; i++) {
                if (i > 0) {
                    // Spacing (pacing), so that other actors' writes land between the reads.
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                }
                final long start = System.nanoTime();
                try {
                    final Object[] result = (Object[])
                            em.createNativeQuery("select value, inet_server_port() from counters where actor = ?")
                                    .setParameter(1, key(row))
                                    .getSingleResult();
                    history.record(new Op(
                            actor,
                            kind,
                            unit,
                            row,
                            ((Number) result[0]).longValue(),
                            cluster.nodeForPort(((Number) result[1]).intValue()),
                            start,
                            System.nanoTime(),
                            null));
                } catch (RuntimeException e) {
                    history.record(new Op(actor, kind, unit, row, -1, null, start, System.nanoTime(), sqlState(e)));
                    return;
                }
            }
        }
    }

    private static void runActor(History history, Workload workload, int actor, long moreUntilNanos) {
        final Random random = new Random(workload.seed() + actor);
        final int ops = workload.minOps() + random.nextInt(workload.maxOps() - workload.minOps() + 1);
        for (int i = 0; i < ops || workload.more().getAsBoolean() && System.nanoTime() < moreUntilNanos; i++) {
            final EntityManagerFactory emf =
                    workload.instances().get(random.nextInt(workload.instances().size()));
            final int dice = random.nextInt(100);
            if (dice < 40) {
                write(history, emf, workload, actor);
            } else if (dice < 75) {
                readUnit(history, emf, workload, actor, actor, Kind.READ_OWN, 1);
            } else {
                final int other = (actor + 1 + random.nextInt(workload.actors() - 1)) % workload.actors();
                readUnit(history, emf, workload, actor, other, Kind.READ_IN_UNIT, 3 + random.nextInt(3));
            }
        }
    }

    /** Runs the actors to completion, with {@code faults} (if not null) injecting faults until they finish. */
    private static void run(History history, Workload workload, FaultThread faults) throws Exception {
        final ExecutorService executor = Executors.newFixedThreadPool(workload.actors());
        final CountDownLatch go = new CountDownLatch(1);
        final List<Future<?>> actors = new ArrayList<>();
        final long[] moreUntil = new long[1];
        try {
            for (int actor = 0; actor < workload.actors(); actor++) {
                final int a = actor;
                actors.add(executor.submit(() -> {
                    go.await();
                    runActor(history, workload, a, moreUntil[0]);
                    return null;
                }));
            }
            if (faults != null) {
                faults.start();
            }
            moreUntil[0] = System.nanoTime() + MORE_AT_MOST.toNanos();
            go.countDown();
            final long deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos();
            for (Future<?> f : actors) {
                try {
                    f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError(
                            "the actors did not finish within 240 s (a stall?); "
                                    + (faults == null ? "no faults" : "faults: " + faults.describe()) + "; "
                                    + workload.instances().stream()
                                            .map(RoutingTestSupport::routingState)
                                            .toList(),
                            e);
                }
            }
        } finally {
            if (faults != null) {
                faults.finish();
            }
            executor.shutdownNow();
        }
    }

    /** Pauses and resumes replay on random standbys (one or both, 50–800 ms), and once stops and starts one. */
    private static final class FaultThread extends Thread {
        private final Random random;
        private final History history;
        private final int stopAfterOps;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        private final AtomicInteger pauses = new AtomicInteger();
        private volatile boolean restarted;
        private volatile Throwable failure;

        FaultThread(long seed, History history, int stopAfterOps) {
            super("fault-injector");
            this.random = new Random(seed);
            this.history = history;
            this.stopAfterOps = stopAfterOps;
        }

        @Override
        public void run() {
            final long deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos();
            boolean stopped = false;
            try {
                while (running.get() && System.nanoTime() < deadline) {
                    if (!stopped && history.size() >= stopAfterOps) {
                        final Node victim = cluster.standby(1 + random.nextInt(2));
                        log.add("stop " + victim.name() + " at op " + history.size());
                        cluster.stop(victim);
                        pause(1000); // how long the standby stays down
                        cluster.start(victim);
                        log.add("start " + victim.name() + " at op " + history.size());
                        stopped = true;
                        restarted = true;
                        continue;
                    }
                    final List<Node> paused = random.nextInt(4) == 0
                            ? cluster.standbys()
                            : List.of(cluster.standby(1 + random.nextInt(2)));
                    paused.forEach(cluster::pauseReplay);
                    pauses.incrementAndGet();
                    pause(50 + random.nextInt(751)); // how long replay stays paused
                    paused.forEach(cluster::resumeReplay);
                    pause(random.nextInt(301)); // until the next pause
                }
                if (!stopped) {
                    log.add("the actors finished before the standby stop");
                }
            } catch (Throwable e) {
                failure = e;
            }
        }

        void finish() throws InterruptedException {
            running.set(false);
            join(TimeUnit.SECONDS.toMillis(60));
            assertThat(isAlive()).as("the fault thread ended").isFalse();
            assertThat(failure).as("the fault thread's own failure").isNull();
        }

        /** Whether the standby stop and start is done, or will not happen (this thread ended). */
        boolean restartedOrEnded() {
            return restarted || !isAlive();
        }

        String describe() {
            return pauses.get() + " replay pauses, " + log;
        }
    }

    /** Waits (bounded) until an actor's read through {@code emf} is served by a replica: Redis's start-up window is over. */
    private static void awaitActorsOnReplicas(EntityManagerFactory emf) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try (RoutingScope ignored = RoutingScope.builder().actor("probe").open();
                    EntityManager em = emf.createEntityManager()) {
                final int port = ((Number) em.createNativeQuery("select inet_server_port()")
                                .getSingleResult())
                        .intValue();
                if (!cluster.nodeForPort(port).isPrimary()) {
                    return;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "actors still read from the primary 30 s after Redis's start-up window (1 s) began; "
                                + routingState(emf));
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos()); // poll interval
        }
    }

    @ParameterizedTest
    @EnumSource(Deployment.class)
    void actorsReadTheirWrites_noIncrementIsLost_andUnitsOfWorkNeverReadBackInTime_whileReplayPausesAndAStandbyRestarts(
            Deployment deployment) throws Exception {
        resetCounters();
        final long seed = seed();
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "16");
        settings.put(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "16");
        if (deployment == Deployment.TWO_INSTANCES_SHARING_REDIS) {
            settings.put(RoutingSettings.REDIS_URI, redis.uri());
            // A Redis without data may have lost markers: for one window actors read from the primary.
            // A short window keeps that start-up phase short; marker positions are exact either way.
            settings.put(RoutingSettings.REDIS_WINDOW, "1s");
            settings.put(RoutingSettings.REDIS_ALLOW_SHORT_WINDOW, "true");
        }
        final List<EntityManagerFactory> instances = new ArrayList<>();
        try {
            instances.add(emf(cluster, settings));
            if (deployment == Deployment.TWO_INSTANCES_SHARING_REDIS) {
                instances.add(emf(cluster, settings));
            }
            instances.forEach(RoutingTestSupport::awaitReplicasUp);
            if (deployment == Deployment.TWO_INSTANCES_SHARING_REDIS) {
                instances.forEach(ReadYourWritesCheckerIT::awaitActorsOnReplicas);
            }
            final History history = new History();
            final FaultThread faults = new FaultThread(seed, history, ACTORS * 80 / 3);
            // Past their own operations, the actors go on until the standby stop and start happened while they ran,
            // and until replicas served enough reads, however fast this machine runs them.
            final Workload workload = new Workload(
                    instances,
                    null,
                    ACTORS,
                    60,
                    100,
                    seed,
                    () -> !faults.restartedOrEnded() || history.replicaReads() < MIN_REPLICA_READS);
            final long start = System.nanoTime();
            run(history, workload, faults);
            final long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            cluster.resumeAll();
            cluster.awaitCaughtUp(Duration.ofSeconds(60));

            final List<Violation> violations = history.check(finalValues());
            final String summary = history.summary(violations);
            System.out.printf(
                    "%n== read-your-writes checker: %s, seed %d, %d ms%nfaults: %s%n%s",
                    deployment, seed, millis, faults.describe(), summary);

            final String context = deployment + ", seed " + seed + " (replay: -Dit.seed=" + seed + "), faults: "
                    + faults.describe() + "\n" + summary;
            assertThat(violations).as(context).isEmpty();
            assertThat(faults.describe())
                    .as("the standby was stopped and started during the run: %s", context)
                    .contains("stop ")
                    .contains("start ");
            assertThat(history.replicaReads())
                    .as("replicas served reads (else the checker tested only the primary): %s", context)
                    .isGreaterThanOrEqualTo(MIN_REPLICA_READS);
            assertThat(history.ops().stream().filter(op -> op.kind() == Kind.WRITE && !op.ok()))
                    .as("writes run on the primary, which stays up: none fails: %s", context)
                    .isEmpty();
        } finally {
            instances.forEach(EntityManagerFactory::close);
        }
    }

    /** The checker must be able to fail: with the actors' scopes on STALE_READ, a paused standby serves their old values. */
    @Test
    void checker_reportsReadYourWritesViolations_whenReadsMayIgnoreTheActorsWrites() throws Exception {
        resetCounters();
        // A lag bound no run reaches: the paused standby stays eligible however long the run takes on this machine
        // (0 would still judge health-check data older than 1 s unknown, which a busy machine can make it).
        final EntityManagerFactory emf = emf(cluster, Map.of(RoutingSettings.MAX_REPLICA_LAG, "1h"));
        try (emf) {
            awaitReplicasUp(emf);
            cluster.pauseReplay(cluster.standby(1));
            final History history = new History();
            final long seed = seed();
            run(history, new Workload(List.of(emf), Strategy.STALE_READ, 8, 30, 30, seed, () -> false), null);
            cluster.resumeAll();
            cluster.awaitCaughtUp(Duration.ofSeconds(30));

            final List<Violation> violations = history.check(finalValues());
            final String summary = history.summary(violations);
            System.out.printf("%n== negative control (STALE_READ, standby1 paused), seed %d%n%s", seed, summary);
            assertThat(violations)
                    .extracting(Violation::kind)
                    .as("the checker catches stale reads: seed %d%n%s", seed, summary)
                    .contains("read-your-writes");
            assertThat(violations)
                    .extracting(Violation::kind)
                    .as("and nothing else")
                    .containsOnly("read-your-writes");
        }
    }
}
