package io.github.hibernaterouting.benchmarks.workload;

import static io.github.hibernaterouting.benchmarks.workload.OffloadBenchmark.SEED_ROWS;

import io.github.hibernaterouting.benchmarks.workload.OffloadBenchmark.Policy;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/** One actor of {@link OffloadBenchmark}: its own rows, what it saw acknowledged, and its policy's routing. */
final class OffloadActor {
    /** What one actor, or all actors of a run together, did and saw. */
    static final class Stats {
        final List<Long> latencies = new ArrayList<>();
        /** The latencies of the reads a replica served, and of those the primary served. */
        final List<Long> replicaLatencies = new ArrayList<>();

        final List<Long> primaryLatencies = new ArrayList<>();
        long reads;
        long replicaReads;
        /** Reads that started while every standby's replay was paused, and those of them a replica served. */
        long stalledReads;

        long stalledReplicaReads;
        /**
         * Of the reads during a pause, those of actors whose last commit is past every standby's replay position: no
         * standby has it, so a router that keeps read-your-writes must send them to the primary. A standby has the
         * others' last commit, so it could serve them.
         */
        long stalledOutOfReach;

        long stalledOutOfReachReplica;
        /**
         * Reads of the actor's own row issued within 5 ms of its commit returning, while no standby's replay was
         * paused: read-after-write at the limit (a local standby replays a commit in well under a millisecond).
         */
        final List<Long> rightAfterLatencies = new ArrayList<>();

        long rightAfterReplica;
        long writes;
        long violationsImmediate;
        long violationsLater;
        long errors;

        synchronized void add(Stats other) {
            latencies.addAll(other.latencies);
            replicaLatencies.addAll(other.replicaLatencies);
            primaryLatencies.addAll(other.primaryLatencies);
            rightAfterLatencies.addAll(other.rightAfterLatencies);
            rightAfterReplica += other.rightAfterReplica;
            reads += other.reads;
            replicaReads += other.replicaReads;
            stalledReads += other.stalledReads;
            stalledReplicaReads += other.stalledReplicaReads;
            stalledOutOfReach += other.stalledOutOfReach;
            stalledOutOfReachReplica += other.stalledOutOfReachReplica;
            writes += other.writes;
            violationsImmediate += other.violationsImmediate;
            violationsLater += other.violationsLater;
            errors += other.errors;
        }
    }

    /** How soon after its own commit a read counts as read-after-write at the limit. */
    static final long RIGHT_AFTER_NANOS = 5_000_000L;

    final PostgresCluster cluster;
    final EntityManagerFactory emf;
    final Policy policy;
    final String key;
    final int index;
    final int actors;
    final int writeEvery;
    final SplittableRandom random;
    final List<Long> rows = new ArrayList<>();
    final Map<Long, Long> acknowledged = new HashMap<>();
    final Stats stats = new Stats();
    long counter;
    int inserts;
    long lastWritten = -1;
    /** The WAL position of this actor's last commit, as its scope reported it; 0 before the first. */
    long lastCommitPosition;

    long mutationStarted = Long.MIN_VALUE / 2;
    /** {@link System#nanoTime()} when this actor's last commit returned. */
    long committedAt = Long.MIN_VALUE / 2;

    long probesOnPrimary;

    OffloadActor(
            PostgresCluster cluster,
            EntityManagerFactory emf,
            Policy policy,
            String key,
            int index,
            int actors,
            int writeEvery) {
        this.cluster = cluster;
        this.emf = emf;
        this.policy = policy;
        this.key = key;
        this.index = index;
        this.actors = actors;
        this.writeEvery = writeEvery;
        this.random = new SplittableRandom(42 + index);
        for (int k = 0; k < SEED_ROWS; k++) {
            rows.add(index * 1000L + k);
            acknowledged.put(index * 1000L + k, 0L);
        }
    }

    /** One tick of the workload described in {@link OffloadBenchmark}: a write and its read-back, or one read. */
    void tick() {
        try {
            if (random.nextInt(writeEvery) == 0) {
                final long row = write();
                read(row, true);
            } else if (random.nextBoolean()) {
                read(
                        lastWritten >= 0 && random.nextBoolean() ? lastWritten : rows.get(random.nextInt(rows.size())),
                        false);
            } else {
                int other = random.nextInt(actors - 1);
                other = other >= index ? other + 1 : other;
                read(other * 1000L + random.nextInt(SEED_ROWS), false);
            }
        } catch (RuntimeException e) {
            if (++stats.errors <= 3) {
                System.err.println(key + ": " + e);
            }
        }
    }

    /** The scope a unit of work of this actor runs in, under its policy. */
    RoutingScope scope(boolean mutation) {
        return switch (policy) {
            case LSN_GATE -> RoutingScope.builder().actor(key).open();
            case PRIMARY -> RoutingScope.open(Strategy.PRIMARY);
            case WINDOW_10S, WINDOW_2S -> {
                final long window = policy == Policy.WINDOW_10S ? 10_000_000_000L : 2_000_000_000L;
                yield RoutingScope.open(
                        mutation || System.nanoTime() - mutationStarted < window
                                ? Strategy.PRIMARY
                                : Strategy.STALE_READ);
            }
        };
    }

    long write() {
        // As in time-window routers (Rails among them), the window opens before the mutation starts.
        mutationStarted = System.nanoTime();
        final long value = ++counter;
        final boolean insert = random.nextInt(5) == 0;
        final long row = insert ? index * 1000L + 100 + inserts++ : rows.get(random.nextInt(rows.size()));
        try (RoutingScope scope = scope(true);
                EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            try {
                if (insert) {
                    em.persist(new Doc(row, index, value));
                } else {
                    em.find(Doc.class, row).val = value;
                }
                em.getTransaction().commit();
                committedAt = System.nanoTime();
                if (scope.lastCommit() != null) {
                    lastCommitPosition = scope.lastCommit().position();
                }
            } finally {
                if (em.getTransaction().isActive()) {
                    em.getTransaction().rollback();
                }
            }
        }
        if (insert) {
            rows.add(row);
        }
        acknowledged.put(row, value);
        lastWritten = row;
        stats.writes++;
        return row;
    }

    void read(long row, boolean immediate) {
        final Long expected = acknowledged.get(row);
        final long started = System.nanoTime();
        final boolean stalled = OffloadBenchmark.ALL_PAUSED.get();
        final boolean rightAfter =
                immediate && started - committedAt < RIGHT_AFTER_NANOS && !OffloadBenchmark.ANY_PAUSED.get();
        final boolean outOfReach =
                stalled && Long.compareUnsigned(lastCommitPosition, OffloadBenchmark.pausedReplayPosition) > 0;
        try (RoutingScope ignored = scope(false);
                EntityManager em = emf.createEntityManager()) {
            final Doc doc = em.find(Doc.class, row);
            final long elapsed = System.nanoTime() - started;
            final Number port =
                    (Number) em.createNativeQuery("select inet_server_port()").getSingleResult();
            final boolean onPrimary = cluster.nodeForPort(port.intValue()).isPrimary();
            stats.latencies.add(elapsed);
            (onPrimary ? stats.primaryLatencies : stats.replicaLatencies).add(elapsed);
            stats.reads++;
            if (rightAfter && !OffloadBenchmark.ANY_PAUSED.get()) {
                stats.rightAfterLatencies.add(elapsed);
                stats.rightAfterReplica += onPrimary ? 0 : 1;
            }
            if (stalled) {
                stats.stalledReads++;
            }
            if (outOfReach) {
                stats.stalledOutOfReach++;
            }
            if (onPrimary) {
                probesOnPrimary++;
            } else {
                stats.replicaReads++;
                if (stalled) {
                    stats.stalledReplicaReads++;
                }
                if (outOfReach) {
                    stats.stalledOutOfReachReplica++;
                }
            }
            if (expected != null && (doc == null || doc.val < expected)) {
                if (immediate) {
                    stats.violationsImmediate++;
                } else {
                    stats.violationsLater++;
                }
            } else if (expected == null && doc == null) {
                throw new IllegalStateException("another actor's row " + row + " is missing");
            }
        }
    }
}
