package io.github.hibernaterouting.it.matrix;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * The faults of a cell, while its actors run: WAL replay paused on one standby or both (50–800 ms) and
 * resumed, again and again; once a third of the operations ran, a standby stopped (fast shutdown) for
 * about a second and started again. With Redis ({@code redis} not null), twice (at 45 % and 85 % of
 * the operations): both standbys pause, then Redis stops answering for 1.2 s ({@code CLIENT PAUSE},
 * longer than the library's 1 s command timeout, so marker stores, reads and raises fail while Redis
 * keeps its data), and the standbys resume 0.6 s after Redis. A mutation that committed meanwhile has
 * an acknowledged write whose marker raise failed, on standbys that lack it, while a concurrent mutation
 * of the same actor may have raised the marker just before. At 65 % Redis restarts empty.
 */
final class MatrixFaults extends Thread {
    private final PostgresCluster cluster;
    private final RedisServer redis;
    private final Random random;
    private final IntSupplier progress;
    private final int stopAt;
    private final List<Integer> redisPausesAt;
    private final int redisRestartAt;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pauses = new AtomicInteger();
    /** Whether every fault of the plan (the standby stop, and with Redis its pauses and restart) was injected. */
    private volatile boolean allInjected;

    private volatile Throwable failure;

    /**
     * @param progress how many operations have run
     * @param expectedOps about how many will run in all
     */
    MatrixFaults(PostgresCluster cluster, RedisServer redis, long seed, IntSupplier progress, int expectedOps) {
        super("matrix-faults");
        this.cluster = cluster;
        this.redis = redis;
        this.random = new Random(seed ^ 0x5DEECE66DL);
        this.progress = progress;
        this.stopAt = expectedOps / 3;
        this.redisPausesAt = List.of(expectedOps * 45 / 100, expectedOps * 85 / 100);
        this.redisRestartAt = expectedOps * 65 / 100;
    }

    @Override
    public void run() {
        final long deadline = System.nanoTime() + Duration.ofSeconds(300).toNanos();
        boolean stopped = false;
        int redisPauses = redis == null ? redisPausesAt.size() : 0;
        boolean redisRestarted = redis == null;
        try {
            while (running.get() && System.nanoTime() < deadline) {
                allInjected = stopped && redisPauses == redisPausesAt.size() && redisRestarted;
                if (!stopped && progress.getAsInt() >= stopAt) {
                    final Node victim = cluster.standby(1 + random.nextInt(2));
                    log.add("stop " + victim.name() + " at op " + progress.getAsInt());
                    cluster.stop(victim);
                    nap(1000); // how long the standby stays down
                    cluster.start(victim);
                    log.add("start " + victim.name() + " at op " + progress.getAsInt());
                    stopped = true;
                    continue;
                }
                if (redisPauses < redisPausesAt.size() && progress.getAsInt() >= redisPausesAt.get(redisPauses)) {
                    log.add("standbys paused, Redis CLIENT PAUSE 1200 ms at op " + progress.getAsInt());
                    cluster.standbys().forEach(cluster::pauseReplay);
                    pauseRedis(1200);
                    nap(600); // the standbys resume 0.6 s after Redis
                    cluster.standbys().forEach(cluster::resumeReplay);
                    redisPauses++;
                    continue;
                }
                if (!redisRestarted && progress.getAsInt() >= redisRestartAt) {
                    log.add("Redis restart (empty) at op " + progress.getAsInt());
                    redis.restart();
                    redisRestarted = true;
                    continue;
                }
                final List<Node> paused =
                        random.nextInt(4) == 0 ? cluster.standbys() : List.of(cluster.standby(1 + random.nextInt(2)));
                paused.forEach(cluster::pauseReplay);
                pauses.incrementAndGet();
                nap(50 + random.nextInt(751)); // how long replay stays paused
                paused.forEach(cluster::resumeReplay);
                nap(random.nextInt(301)); // until the next pause
            }
            if (!stopped) {
                log.add("the actors finished before the standby stop");
            }
        } catch (Throwable e) {
            failure = e;
        }
    }

    /** Makes Redis hold every client's commands for {@code millis} (its data stays). */
    private void pauseRedis(long millis) {
        final RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            connection.sync().clientPause(millis);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        nap(millis); // the pause's length: Redis holds the commands meanwhile
    }

    private static void nap(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Stops injecting, waits for the thread, and rethrows its own failure. */
    void finish() throws InterruptedException {
        running.set(false);
        join(TimeUnit.SECONDS.toMillis(60));
        if (isAlive()) {
            throw new AssertionError("the fault thread did not end");
        }
        if (failure != null) {
            throw new AssertionError("the fault thread failed", failure);
        }
    }

    /**
     * Whether every fault of the plan was injected (the standby stop and start, and with Redis its two pauses and
     * its restart), or none more will be (this thread ended): until then the actors go on.
     */
    boolean allInjectedOrEnded() {
        return allInjected || !isAlive();
    }

    boolean stoppedAStandby() {
        return log.stream().anyMatch(line -> line.startsWith("start "));
    }

    String describe() {
        return pauses.get() + " replay pauses, " + log;
    }
}
