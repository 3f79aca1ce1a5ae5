package io.github.hibernaterouting.testkit;

import static io.github.hibernaterouting.testkit.Jdbc.closeQuietly;
import static io.github.hibernaterouting.testkit.Jdbc.lsn;
import static io.github.hibernaterouting.testkit.Jdbc.query;
import static io.github.hibernaterouting.testkit.Jdbc.str;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.postgresql.replication.LogSequenceNumber;

/**
 * The replication controls of a {@link PostgresCluster}: pausing and resuming WAL replay on a
 * standby, the primary's and the standbys' WAL positions, and waiting for a standby to replay up to
 * a position. Everything goes over JDBC through the cluster's public API ({@code adminConnection},
 * {@code primary()}, {@code standbys()}, {@code isRunning}), so it works the same for managed and
 * external clusters. The cluster checks that a node given as a standby is one before calling in.
 */
final class ReplicationControl {
    private final PostgresCluster cluster;

    ReplicationControl(PostgresCluster cluster) {
        this.cluster = cluster;
    }

    /** See {@link PostgresCluster#pauseReplay(Node)}. */
    void pause(Node standby) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        long nextPoke = 0;
        Connection primaryConnection = null;
        try (Connection c = cluster.adminConnection(standby)) {
            query(c, "SELECT pg_wal_replay_pause()");
            while (true) {
                String state = query(c, "SELECT pg_get_wal_replay_pause_state()");
                if ("paused".equals(state)) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new TestkitException(
                            "Replay on " + standby + " did not pause within 30s (state: " + state + ")");
                }
                if (System.nanoTime() > nextPoke) {
                    try {
                        if (primaryConnection == null) {
                            primaryConnection = cluster.adminConnection(cluster.primary());
                        }
                        query(primaryConnection, "SELECT txid_current()");
                    } catch (SQLException e) {
                        // Primary down: the pause may still complete from WAL already received.
                        closeQuietly(primaryConnection);
                        primaryConnection = null;
                    }
                    nextPoke = System.nanoTime() + Duration.ofMillis(50).toNanos();
                }
                Os.pause();
            }
        } catch (SQLException e) {
            throw new TestkitException("Could not pause replay on " + standby + ": " + e.getMessage(), e);
        } finally {
            closeQuietly(primaryConnection);
        }
    }

    /** See {@link PostgresCluster#promote(Node)}. */
    void promote(Node standby) {
        try (Connection c = cluster.adminConnection(standby)) {
            if (!"t".equals(query(c, "SELECT pg_promote(true, 60)"))) {
                throw new TestkitException("Promotion of " + standby + " did not complete within 60s");
            }
        } catch (SQLException e) {
            throw new TestkitException("Could not promote " + standby + ": " + e.getMessage(), e);
        }
    }

    /** See {@link PostgresCluster#follow(Node, Node)}. */
    void follow(Node standby, Node upstream) {
        try (Connection up = cluster.adminConnection(upstream);
                Connection c = cluster.adminConnection(standby)) {
            query(
                    up,
                    "SELECT count(pg_create_physical_replication_slot(" + Jdbc.literal(standby.name()) + ", true))"
                            + " WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = "
                            + Jdbc.literal(standby.name()) + ")");
            final String conninfo = "host=127.0.0.1 port=" + upstream.port() + " user="
                    + Provisioning.REPLICATION_USER + " password=" + Provisioning.REPLICATION_PASSWORD
                    + " application_name=" + standby.name();
            try (java.sql.Statement s = c.createStatement()) {
                s.execute("ALTER SYSTEM SET primary_conninfo = " + Jdbc.literal(conninfo));
            }
            query(c, "SELECT pg_reload_conf()");
            final String timeline =
                    query(up, "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int");
            final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (true) {
                final String receiving = query(
                        c,
                        "SELECT (SELECT received_tli FROM pg_stat_wal_receiver WHERE status = 'streaming'"
                                + " AND sender_port = " + upstream.port() + ")");
                if (timeline.equals(receiving)) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new TestkitException("Standby " + standby + " does not stream timeline " + timeline + " from "
                            + upstream + " within 60s (receiving: " + receiving + ")");
                }
                Os.pause();
            }
        } catch (SQLException e) {
            throw new TestkitException("Could not make " + standby + " follow " + upstream + ": " + e.getMessage(), e);
        }
    }

    /**
     * See {@link PostgresCluster#detach(Node)}: as a network partition cuts a standby off, it keeps
     * serving what it replayed. With a promotion of it after, a failover that loses WAL: what the
     * primary wrote since is on the other standbys only.
     */
    void detach(Node standby) {
        try (Connection c = cluster.adminConnection(standby)) {
            try (java.sql.Statement s = c.createStatement()) {
                s.execute("ALTER SYSTEM SET primary_conninfo = ''");
            }
            query(c, "SELECT pg_reload_conf()");
            final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!"0".equals(query(c, "SELECT count(*) FROM pg_stat_wal_receiver"))) {
                if (System.nanoTime() > deadline) {
                    throw new TestkitException("Standby " + standby + " still receives WAL 60s after it was detached");
                }
                Os.pause();
            }
        } catch (SQLException e) {
            throw new TestkitException("Could not detach " + standby + ": " + e.getMessage(), e);
        }
    }

    /** See {@link PostgresCluster#resumeReplay(Node)}. */
    void resume(Node standby) {
        try (Connection c = cluster.adminConnection(standby)) {
            query(c, "SELECT pg_wal_replay_resume()");
        } catch (SQLException e) {
            throw new TestkitException("Could not resume replay on " + standby + ": " + e.getMessage(), e);
        }
    }

    /** See {@link PostgresCluster#isReplayPaused(Node)}. */
    boolean isPaused(Node standby) {
        try (Connection c = cluster.adminConnection(standby)) {
            return !"not paused".equals(query(c, "SELECT pg_get_wal_replay_pause_state()"));
        } catch (SQLException e) {
            throw new TestkitException(
                    "Could not read the replay pause state of " + standby + ": " + e.getMessage(), e);
        }
    }

    /** See {@link PostgresCluster#resumeAll()}. */
    void resumeAll() {
        for (Node standby : cluster.standbys()) {
            if (cluster.isRunning(standby)) {
                resume(standby);
            }
        }
    }

    /** See {@link PostgresCluster#currentWalLsn()}. */
    LogSequenceNumber currentWalLsn() {
        try (Connection c = cluster.adminConnection(cluster.primary())) {
            return LogSequenceNumber.valueOf(query(c, "SELECT pg_current_wal_lsn()"));
        } catch (SQLException e) {
            throw new TestkitException(
                    "Could not read the current WAL LSN of " + cluster.primary() + ": " + e.getMessage(), e);
        }
    }

    /** {@code function} ({@code pg_last_wal_replay_lsn()}, {@code pg_last_wal_receive_lsn()}) on the standby. */
    LogSequenceNumber standbyLsn(Node standby, String function) {
        try (Connection c = cluster.adminConnection(standby)) {
            return lsn(query(c, "SELECT " + function));
        } catch (SQLException e) {
            throw new TestkitException("Could not read " + function + " on " + standby + ": " + e.getMessage(), e);
        }
    }

    /** See {@link PostgresCluster#awaitReplay(Node, LogSequenceNumber, Duration)}. */
    void awaitReplay(Node node, LogSequenceNumber lsn, Duration timeout) {
        if (node.isPrimary()) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Connection c = null;
        String last = "unknown";
        try {
            while (true) {
                try {
                    if (c == null) {
                        c = cluster.adminConnection(node);
                    }
                    LogSequenceNumber replayed = lsn(query(c, "SELECT pg_last_wal_replay_lsn()"));
                    if (replayed != null && Long.compareUnsigned(replayed.asLong(), lsn.asLong()) >= 0) {
                        return;
                    }
                    last = "replay LSN " + str(replayed) + ", receive LSN "
                            + str(lsn(query(c, "SELECT pg_last_wal_receive_lsn()"))) + ", pause state "
                            + query(c, "SELECT pg_get_wal_replay_pause_state()");
                } catch (SQLException e) {
                    closeQuietly(c);
                    c = null;
                    last = "not reachable: " + e.getMessage();
                }
                if (System.nanoTime() > deadline) {
                    throw new TestkitException(
                            node + " did not replay up to " + lsn.asString() + " within " + timeout + ": " + last);
                }
                Os.pause();
            }
        } finally {
            closeQuietly(c);
        }
    }

    /** See {@link PostgresCluster#awaitCaughtUp(Duration)}. */
    void awaitCaughtUp(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        LogSequenceNumber target = currentWalLsn();
        for (Node standby : cluster.standbys()) {
            if (cluster.isRunning(standby) && !isPaused(standby)) {
                awaitReplay(standby, target, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
        }
    }
}
