package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A Redis master, one replica of it and one Sentinel watching them (quorum 1), all on 127.0.0.1
 * with free ports, temp directories and persistence off, for failover tests.
 *
 * <p>The Sentinel starts with a long {@code down-after-milliseconds} (one hour), so that killing the
 * master leaves it unpromoted, with no master answering, for as long as a test needs;
 * {@link #allowFailover()} then shortens it to 500 ms and {@link #awaitPromoted()} waits until the
 * Sentinel names the replica as the master. Uses the same binary as {@link RedisServer}, started with
 * {@code --sentinel}. {@link #close()} stops all three and deletes their temp directories.
 */
public final class RedisSentinelGroup implements AutoCloseable {
    /** The name the Sentinel monitors the master under. */
    public static final String MASTER_NAME = "mymaster";

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final RedisServer master;
    private final RedisServer replica;
    private final Path workDir;
    private final int sentinelPort;
    private final ServerProcess sentinel;
    private boolean closed;

    private RedisSentinelGroup(RedisServer master, RedisServer replica) {
        this.master = master;
        this.replica = replica;
        this.workDir = ServerProcess.createTempDir(null, "hrtk-sentinel-");
        this.sentinelPort = Os.freePorts(1)[0];
        final Path config = workDir.resolve("sentinel.conf");
        try {
            // The Sentinel rewrites its configuration file: it lives in the temp dir.
            Files.writeString(
                    config,
                    String.join(
                            "\n",
                            "port " + sentinelPort,
                            "bind 127.0.0.1",
                            "dir " + workDir,
                            "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + master.port() + " 1",
                            "sentinel down-after-milliseconds " + MASTER_NAME + " 3600000",
                            "sentinel failover-timeout " + MASTER_NAME + " 5000",
                            "sentinel parallel-syncs " + MASTER_NAME + " 1",
                            ""));
        } catch (IOException e) {
            ServerProcess.deleteTempDir(workDir);
            throw new UncheckedIOException("Could not write " + config, e);
        }
        this.sentinel = new ServerProcess(
                "redis-sentinel",
                List.of(RedisServer.binary().toString(), config.toString(), "--sentinel"),
                workDir.resolve("sentinel.log"),
                "TERM");
    }

    /**
     * Starts the master, the replica and the Sentinel, and waits until the replica is in sync and
     * the Sentinel knows it.
     *
     * @throws TestkitException if any of them does not come up within a minute
     */
    public static RedisSentinelGroup start() {
        final RedisServer master = RedisServer.start();
        RedisServer replica = null;
        RedisSentinelGroup group = null;
        try {
            replica = RedisServer.start(List.of("--replicaof", "127.0.0.1", Integer.toString(master.port())));
            group = new RedisSentinelGroup(master, replica);
            group.startSentinel();
            return group;
        } catch (RuntimeException | Error e) {
            if (group != null) {
                group.close();
            } else {
                if (replica != null) {
                    replica.close();
                }
                master.close();
            }
            throw e;
        }
    }

    private void startSentinel() {
        sentinel.start();
        final long deadline = System.nanoTime() + TIMEOUT.toNanos();
        final RedisServer replicaServer = replica;
        sentinel.awaitReady(
                "Redis Sentinel on port " + sentinelPort,
                () -> String.valueOf(replicaServer.query("INFO replication")).contains("master_link_status:up")
                        && String.valueOf(RedisServer.query(sentinelPort, "INFO sentinel"))
                                .contains("status=ok,address=127.0.0.1:" + master.port() + ",slaves=1,sentinels=1"),
                deadline,
                "see the master, its replica in sync, within " + TIMEOUT);
    }

    /** The master it started with (after a failover, no longer the master). */
    public RedisServer master() {
        return master;
    }

    /** The replica it started with (after a failover, the master). */
    public RedisServer replica() {
        return replica;
    }

    /** The Sentinel's port. */
    public int sentinelPort() {
        return sentinelPort;
    }

    /** {@code redis-sentinel://127.0.0.1:<sentinel port>#mymaster}, Lettuce's form. */
    public String uri() {
        return "redis-sentinel://127.0.0.1:" + sentinelPort + "#" + MASTER_NAME;
    }

    /** The port of the Redis the Sentinel names as the master now, or -1 if it cannot be asked. */
    public int masterPort() {
        final String reply = RedisServer.query(sentinelPort, "SENTINEL get-master-addr-by-name " + MASTER_NAME);
        if (reply == null || !reply.contains("\n")) {
            return -1;
        }
        return Integer.parseInt(reply.substring(reply.indexOf('\n') + 1).trim());
    }

    /** Lets the Sentinel fail the master over 500 ms after it stops answering. */
    public void allowFailover() {
        final String reply =
                RedisServer.query(sentinelPort, "SENTINEL SET " + MASTER_NAME + " down-after-milliseconds 500");
        if (!"+OK".equals(reply)) {
            throw new TestkitException(
                    "The Sentinel answered SENTINEL SET with " + reply + "; see " + sentinel.logFile());
        }
    }

    /** Waits (polling, up to a minute) until the Sentinel names the replica as the master, and the replica says it is one. */
    public void awaitPromoted() {
        final BooleanSupplier promoted = () -> masterPort() == replica.port()
                && String.valueOf(replica.query("INFO replication")).contains("role:master");
        final long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!promoted.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new TestkitException(ServerProcess.failure(
                        "The Sentinel did not promote the replica within " + TIMEOUT, sentinel.logFile()));
            }
            java.util.concurrent.locks.LockSupport.parkNanos(
                    Duration.ofMillis(20).toNanos()); // the poll interval
        }
    }

    /** Stops the Sentinel, the replica and the master, and deletes their temp directories; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            sentinel.stop(Duration.ofSeconds(30));
            ServerProcess.deleteTempDir(workDir);
        } finally {
            try {
                replica.close();
            } finally {
                master.close();
            }
        }
    }

    @Override
    public String toString() {
        return "RedisSentinelGroup[" + uri() + ", master " + master.port() + ", replica " + replica.port() + "]";
    }
}
