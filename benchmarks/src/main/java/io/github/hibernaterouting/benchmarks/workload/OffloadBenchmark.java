package io.github.hibernaterouting.benchmarks.workload;

import io.github.hibernaterouting.benchmarks.workload.LagSchedule.Fault;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * Read-your-writes policies compared on one cluster (primary + 2 streaming standbys) under the
 * same workload and the same injected replication lag.
 *
 * <p>Policies: {@code lsn} (this library's LSN gate: every operation in a {@code RoutingScope} with
 * the actor, default {@code READ_AFTER_WRITE}); {@code window10s} (a time window, as some routers do: after an actor starts
 * a mutation, its reads go to the primary for 10 s, else to the replicas with {@code STALE_READ});
 * {@code window2s} (Rails' DatabaseSelector delay); {@code primary} (everything on the primary).
 *
 * <p>Workload: {@code --actors} threads, each ticking every {@code --tick-ms} for {@code --ticks}
 * ticks (a fixed, bounded number of operations; the random choices are seeded per actor, so every
 * policy gets the same sequence). At each tick an actor writes with probability 1/{@code
 * --write-every} (updates one of its rows to the next value of its own counter, every fifth write
 * inserts a new row instead) and reads the row back at once; otherwise it reads: half the time one
 * of its own rows (the last written one or a random one), half the time another actor's row. A
 * read of its own row that returns less than the value the actor last saw acknowledged (or no row)
 * is a read-your-writes violation. Which node served a read is asked of the server ({@code select
 * inet_server_port()} in the same EntityManager, not timed).
 *
 * <p>Lag: replay on the standbys is paused and resumed on a fixed schedule relative to the start
 * of each policy's run ({@code --scenario short}: pauses of 1.5 to 3 s; {@code long}: two pauses of
 * 15 s, longer than both windows; {@code steady}: none, as long as {@code short}).
 *
 * <p>Before the measured runs every policy's units of work run back to back, without ticks or faults
 * ({@code --warmup-units}, 2,000 per actor and policy), so that no policy pays for the JIT's work.
 * During each run a control thread ({@link PlainReads}) makes a plain JDBC lookup on every server at
 * each tick: what a read costs on a standby and on the primary under the same load, the baseline for
 * the policies' reads. {@code --stagger} spreads the actors' ticks over the tick instead of starting
 * them all at once (six units of work at the same instant on two CPUs measure queueing as much as
 * reads).
 */
public final class OffloadBenchmark {
    private OffloadBenchmark() {}

    enum Policy {
        LSN_GATE("(a) LSN gate (this library)"),
        WINDOW_10S("(b) 10 s window"),
        WINDOW_2S("(c) 2 s delay (Rails)"),
        PRIMARY("(d) primary only");

        final String label;

        Policy(String label) {
            this.label = label;
        }
    }

    static final int SEED_ROWS = 4;

    /** Whether every standby's replay is paused right now (set by the fault thread). */
    static final java.util.concurrent.atomic.AtomicBoolean ALL_PAUSED = new java.util.concurrent.atomic.AtomicBoolean();

    /** Whether some standby's replay is paused right now, or about to be (set by the fault thread). */
    static final java.util.concurrent.atomic.AtomicBoolean ANY_PAUSED = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * While every standby is paused, the furthest position any of them has replayed: an actor whose last commit is past
     * it needs the primary for read-your-writes.
     */
    static volatile long pausedReplayPosition = -1L;

    /** {@code --stagger}: the actors' ticks spread over the tick instead of all at its start. */
    static boolean STAGGER;

    public static void main(String[] args) throws Exception {
        final Map<String, String> options = Options.parse(args);
        final String scenario = options.getOrDefault("scenario", "long");
        STAGGER = options.containsKey("stagger");
        final int actors = Integer.parseInt(options.getOrDefault("actors", "6"));
        final long tickMillis = Long.parseLong(options.getOrDefault("tick-ms", "50"));
        final List<Fault> faults = LagSchedule.forScenario(scenario);
        final int ticks = Integer.parseInt(options.getOrDefault(
                "ticks", String.valueOf((faults.get(faults.size() - 1).atMillis() + 5_000) / tickMillis)));
        final int writeEvery = Integer.parseInt(options.getOrDefault("write-every", "80"));
        // Units of work per actor and policy before the measured runs.
        final int warmupUnits = Integer.parseInt(options.getOrDefault("warmup-units", "2000"));
        final List<Policy> policies = options.containsKey("policies")
                ? Arrays.stream(options.get("policies").split(","))
                        .map(p -> Policy.valueOf(p.toUpperCase(Locale.ROOT)))
                        .toList()
                : List.of(Policy.values());

        try (PostgresCluster cluster = PostgresCluster.builder().standbys(2).start()) {
            try (Connection c = cluster.connect(cluster.primary());
                    Statement s = c.createStatement()) {
                s.execute(
                        "create table doc (id bigint primary key, owner int not null, val bigint not null, version bigint not null)");
            }
            final Map<String, Object> settings = new HashMap<>();
            settings.put(PersistenceConfiguration.JDBC_URL, cluster.primary().jdbcUrl());
            settings.put(PersistenceConfiguration.JDBC_USER, cluster.user());
            settings.put(PersistenceConfiguration.JDBC_PASSWORD, cluster.password());
            settings.put(
                    RoutingSettings.REPLICA_URLS,
                    cluster.standbys().stream().map(Node::jdbcUrl).collect(Collectors.joining(",")));
            // The bounded-staleness guard would take a standby out of every policy's reads after
            // 10 s of lag and so hide what the windows alone do; switched off for all four policies.
            settings.put(RoutingSettings.MAX_REPLICA_LAG, "0");
            settings.put(RoutingSettings.MAX_REPLICA_LAG_BYTES, "0");
            settings.put("hibernate.hbm2ddl.auto", "none");
            // RoutingStatus counts through the meters; the default global registry has no registry
            // behind it and counts nothing.
            final io.micrometer.core.instrument.simple.SimpleMeterRegistry meters =
                    new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
            settings.put(RoutingSettings.METER_REGISTRY, meters);
            settings.putAll(options.entrySet().stream()
                    .filter(e -> e.getKey().startsWith("hibernate."))
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
            final PersistenceConfiguration configuration =
                    new PersistenceConfiguration("offload").managedClass(Doc.class);
            settings.forEach(configuration::property);
            try (EntityManagerFactory emf = configuration.createEntityManagerFactory();
                    PlainReads control = new PlainReads(cluster)) {
                System.out.printf(
                        Locale.ROOT,
                        "scenario %s: %d actors, a tick every %d ms, %d ticks each (%.0f s), a write every %d ticks on average;"
                                + " faults %s%n",
                        scenario,
                        actors,
                        tickMillis,
                        ticks,
                        ticks * tickMillis / 1000.0,
                        writeEvery,
                        LagSchedule.describe(faults));
                // Warm-up, not reported, without faults: every policy's units of work back to back (no tick), twice
                // in turn, so that the JIT has compiled every policy's path before the first measured run. With
                // a few seconds of ticks only, the policy measured first paid for the compilation (its median
                // read was 1.2 to 2 times what it was when measured second).
                for (int pass = 0; pass < 2; pass++) {
                    for (Policy policy : policies) {
                        runPolicy(
                                cluster,
                                emf,
                                control,
                                policy,
                                "warmup",
                                actors,
                                0,
                                warmupUnits / 2,
                                writeEvery,
                                List.of());
                    }
                }
                final Map<Policy, String> rows = new java.util.LinkedHashMap<>();
                int run = 0;
                for (Policy policy : policies) {
                    // Counted as differences: the library keeps its counters, which a cleared registry
                    // would no longer show.
                    final Map<String, Long> fallbacksBefore = counts(meters, "hibernate.routing.fallbacks", "reason");
                    final Map<String, Long> gateBefore = counts(meters, "hibernate.routing.lsn_gate", "outcome");
                    rows.put(
                            policy,
                            runPolicy(
                                    cluster,
                                    emf,
                                    control,
                                    policy,
                                    "run" + (++run),
                                    actors,
                                    tickMillis,
                                    ticks,
                                    writeEvery,
                                    faults));
                    System.out.println("  " + policy.label + ": fallbacks "
                            + since(counts(meters, "hibernate.routing.fallbacks", "reason"), fallbacksBefore)
                            + ", LSN gate "
                            + since(counts(meters, "hibernate.routing.lsn_gate", "outcome"), gateBefore));
                }
                System.out.println();
                System.out.println(
                        "| policy | reads | on replicas | reads on primary | primary statements | RYW violations (immediate + later) | read p50 | read p99 | writes | errors |");
                System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
                rows.forEach((policy, row) -> System.out.println(row));
            }
        }
    }

    private static String runPolicy(
            PostgresCluster cluster,
            EntityManagerFactory emf,
            PlainReads control,
            Policy policy,
            String runName,
            int actors,
            long tickMillis,
            int ticks,
            int writeEvery,
            List<Fault> faults)
            throws Exception {
        reset(cluster, actors);
        final RoutingStatus.Node before = RoutingStatus.of(emf).nodes().get(0);
        final OffloadActor.Stats total = new OffloadActor.Stats();
        final AtomicLong probesOnPrimary = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long start = System.nanoTime() + 200_000_000L;
        final List<Thread> threads = new ArrayList<>();
        // Staggered, the control's lookups fall between two actors' units of work.
        control.start(start + (STAGGER ? tickMillis * 1_000_000L / (2L * actors) : 0), tickMillis, actors);
        for (int a = 0; a < actors; a++) {
            // --stagger: actor a ticks a/actors of a tick after actor 0, so units of work do not all start at once.
            final long phase = STAGGER ? a * tickMillis * 1_000_000L / actors : 0;
            final OffloadActor actor =
                    new OffloadActor(cluster, emf, policy, runName + "-actor" + a, a, actors, writeEvery);
            final Thread thread = new Thread(
                    () -> {
                        try {
                            for (int tick = 0; tick < ticks; tick++) {
                                sleepUntil(start + phase + tick * tickMillis * 1_000_000L);
                                actor.tick();
                            }
                            total.add(actor.stats);
                            probesOnPrimary.addAndGet(actor.probesOnPrimary);
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    },
                    "actor-" + a);
            threads.add(thread);
            thread.start();
        }
        final Thread faultThread = new Thread(
                () -> {
                    for (Fault fault : faults) {
                        sleepUntil(start + fault.atMillis() * 1_000_000L);
                        // "Every standby paused" holds from when the last pause has taken effect to before the
                        // first resume, so a read counted in it surely saw no standby replay.
                        if (!fault.pause()) {
                            ALL_PAUSED.set(false);
                        } else {
                            ANY_PAUSED.set(true);
                        }
                        for (int standby : fault.standbys()) {
                            if (fault.pause()) {
                                cluster.pauseReplay(cluster.standby(standby));
                            } else {
                                cluster.resumeReplay(cluster.standby(standby));
                            }
                        }
                        ANY_PAUSED.set(cluster.standbys().stream().anyMatch(cluster::isReplayPaused));
                        if (cluster.standbys().stream().allMatch(cluster::isReplayPaused)) {
                            pausedReplayPosition = cluster.standbys().stream()
                                    .mapToLong(n -> cluster.replayLsn(n).asLong())
                                    .reduce(0L, (x, y) -> Long.compareUnsigned(x, y) >= 0 ? x : y);
                            ALL_PAUSED.set(true);
                        }
                    }
                },
                "faults");
        faultThread.start();
        for (Thread thread : threads) {
            thread.join();
        }
        faultThread.join();
        control.stop();
        cluster.resumeAll();
        ALL_PAUSED.set(false);
        ANY_PAUSED.set(false);
        pausedReplayPosition = -1L;
        final double seconds = (System.nanoTime() - start) / 1e9;
        if (failure.get() != null) {
            throw new IllegalStateException(policy + " failed", failure.get());
        }
        final RoutingStatus.Node after = RoutingStatus.of(emf).nodes().get(0);
        final long primaryStatements =
                after.reads() + after.writes() - before.reads() - before.writes() - probesOnPrimary.get();
        final long[] sorted =
                total.latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        final String row = String.format(
                Locale.ROOT,
                "| %s | %,d | %.1f %% | %,d | %,d | %d (%d + %d) | %.2f ms | %.1f ms | %d | %d |",
                policy.label,
                total.reads,
                100.0 * total.replicaReads / total.reads,
                total.reads - total.replicaReads,
                primaryStatements,
                total.violationsImmediate + total.violationsLater,
                total.violationsImmediate,
                total.violationsLater,
                percentile(sorted, 0.50) / 1e6,
                percentile(sorted, 0.99) / 1e6,
                total.writes,
                total.errors);
        if (!runName.equals("warmup")) {
            System.out.println(row);
            System.out.printf(
                    Locale.ROOT,
                    "  %s: %.1f s; %,d reads started while every standby was paused, %.1f %% of them on replicas;"
                            + " %,d reads otherwise, %.1f %% on replicas%n",
                    policy.label,
                    seconds,
                    total.stalledReads,
                    total.stalledReads == 0 ? 0.0 : 100.0 * total.stalledReplicaReads / total.stalledReads,
                    total.reads - total.stalledReads,
                    total.reads == total.stalledReads
                            ? 0.0
                            : 100.0
                                    * (total.replicaReads - total.stalledReplicaReads)
                                    / (total.reads - total.stalledReads));
            final long[] rightAfter = total.rightAfterLatencies.stream()
                    .mapToLong(Long::longValue)
                    .sorted()
                    .toArray();
            System.out.printf(
                    Locale.ROOT,
                    "  %s: read-after-write at the limit (own row, within 5 ms of the commit, no standby paused):"
                            + " %,d reads, %.1f %% on replicas, median %.3f ms, p99 %.3f ms%n",
                    policy.label,
                    rightAfter.length,
                    rightAfter.length == 0 ? 0.0 : 100.0 * total.rightAfterReplica / rightAfter.length,
                    percentile(rightAfter, 0.50) / 1e6,
                    percentile(rightAfter, 0.99) / 1e6);
            System.out.print(control.report(policy.label, total.replicaLatencies, total.primaryLatencies));
            final long reachable = total.stalledReads - total.stalledOutOfReach;
            System.out.printf(
                    Locale.ROOT,
                    "  %s: during the pauses, %,d reads by actors whose last commit a standby had replayed, %.1f %% of"
                            + " them on replicas; %,d by actors whose last commit no standby had (read-your-writes"
                            + " needs the primary), %,d of them on replicas;"
                            + " a router that knew every standby's position could serve %.1f %% of all reads%n",
                    policy.label,
                    reachable,
                    reachable == 0
                            ? 0.0
                            : 100.0 * (total.stalledReplicaReads - total.stalledOutOfReachReplica) / reachable,
                    total.stalledOutOfReach,
                    total.stalledOutOfReachReplica,
                    100.0 * (total.reads - total.stalledOutOfReach) / total.reads);
            System.out.flush();
        }
        return row;
    }

    /** The counters named {@code name} by their {@code tag}, as {@code tag-value=count} pairs. */
    private static Map<String, Long> counts(
            io.micrometer.core.instrument.MeterRegistry meters, String name, String tag) {
        final Map<String, Long> counts = new java.util.TreeMap<>();
        meters.find(name).counters().forEach(c -> counts.merge(c.getId().getTag(tag), (long) c.count(), Long::sum));
        return counts;
    }

    /** {@code now} less {@code before}, per tag value, without the ones that did not change. */
    private static String since(Map<String, Long> now, Map<String, Long> before) {
        final Map<String, Long> delta = new java.util.TreeMap<>();
        now.forEach((key, count) -> {
            final long d = count - before.getOrDefault(key, 0L);
            if (d != 0) {
                delta.put(key, d);
            }
        });
        return delta.toString();
    }

    static long percentile(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
    }

    static void sleepUntil(long nanoTime) {
        final long wait = nanoTime - System.nanoTime();
        if (wait > 0) {
            try {
                Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    private static void reset(PostgresCluster cluster, int actors) throws SQLException {
        cluster.resumeAll();
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute("truncate doc");
            s.execute("insert into doc select a * 1000 + k, a, 0, 0 from generate_series(0, " + (actors - 1)
                    + ") a, generate_series(0, " + (SEED_ROWS - 1) + ") k");
        }
        cluster.awaitCaughtUp(Duration.ofSeconds(60));
    }
}
