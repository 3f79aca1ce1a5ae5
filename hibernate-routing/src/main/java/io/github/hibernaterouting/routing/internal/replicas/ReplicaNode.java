package io.github.hibernaterouting.routing.internal.replicas;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * One hot standby: where its connections come from, its circuit breaker, and what was last learned
 * about it.
 *
 * <p>The state fields are written by the health check (and by on-demand checks) and read on every
 * routing decision without locking; each is a single volatile, so a reader may combine values from
 * two checks, which only ever errs by one check interval.
 */
public final class ReplicaNode {
    /** Why a replica cannot serve a read right now; the value doubles as a metrics tag. */
    public enum Ineligibility {
        DOWN(RouteReason.REPLICA_DOWN),
        NOT_IN_RECOVERY(RouteReason.NOT_IN_RECOVERY),
        LAG_BOUND(RouteReason.LAG_BOUND),
        BEHIND_LSN(RouteReason.LSN_FALLBACK);

        private final RouteReason fallback;

        Ineligibility(RouteReason fallback) {
            this.fallback = fallback;
        }

        /** The reason a read that wanted a replica went to the primary instead. */
        public static RouteReason fallbackReason(Ineligibility why) {
            return why == null ? RouteReason.REPLICA_DOWN : why.fallback;
        }
    }

    private final int index;
    private final String name;
    private final String maskedUrl;
    private final DataSource connections;
    private final CircuitBreaker breaker;

    volatile boolean checked;
    volatile boolean reachable;
    volatile boolean inRecovery = true;
    volatile long replayLsn = Lsn.UNKNOWN;
    volatile long lagBytes = -1;
    volatile double lagSeconds = Double.NaN;
    /**
     * The isolation level a pooled connection's transactions get unless told otherwise (the server's,
     * database's, role's, URL's or pool's {@code default_transaction_isolation});
     * {@link IsolationLevel#UNKNOWN} until a check says.
     */
    private volatile int defaultIsolation = IsolationLevel.UNKNOWN;

    public ReplicaNode(int index, String name, String maskedUrl, DataSource connections, CircuitBreaker breaker) {
        this.index = index;
        this.name = name;
        this.maskedUrl = maskedUrl;
        this.connections = connections;
        this.breaker = breaker;
    }

    /** The replica's position in the configuration, from 0. */
    public int index() {
        return index;
    }

    /** The node number in the meters: 1 + {@link #index()} (0 is the primary). */
    public int metricsNode() {
        return index + 1;
    }

    /** The replica's name in logs and meter tags ({@code replica1}, {@code replica2}, …). */
    public String name() {
        return name;
    }

    /** Where connections to this replica come from. */
    public DataSource connections() {
        return connections;
    }

    public CircuitBreaker breaker() {
        return breaker;
    }

    /** The last known replay position, {@link Lsn#UNKNOWN} before the first check. */
    public long replayLsn() {
        return replayLsn;
    }

    /** Bytes of WAL the replica had left to replay at the last check, {@code -1} if unknown. */
    public long lagBytes() {
        return lagBytes;
    }

    /** Seconds since the replica last replayed a transaction while behind, {@code 0} when caught up, NaN if unknown. */
    public double lagSeconds() {
        return lagSeconds;
    }

    /** Whether the breaker is closed and the last check reached the server. */
    public boolean isUp() {
        return reachable && breaker.isClosed();
    }

    /** See the field; read when a replica connection is bound, to give it the isolation level the unit of work needs. */
    public int defaultIsolation() {
        return defaultIsolation;
    }

    /** The library's own pool's state, or {@code null} when the connections come from elsewhere. */
    public HikariPoolMXBean ownPool() {
        return connections instanceof HikariDataSource pool ? pool.getHikariPoolMXBean() : null;
    }

    /**
     * Why this replica cannot serve a read needing {@code minimumLsn}, or {@code null} if it can.
     * Requests only use replicas whose breaker is closed; the health check makes the half-open trial.
     */
    public Ineligibility ineligibility(LagBounds bounds, long minimumLsn) {
        if (!reachable || !breaker.isClosed()) {
            return Ineligibility.DOWN;
        }
        if (bounds.checkRecovery() && !inRecovery) {
            return Ineligibility.NOT_IN_RECOVERY;
        }
        if (bounds.maxLagBytes() > 0 && (lagBytes < 0 || lagBytes > bounds.maxLagBytes())) {
            return Ineligibility.LAG_BOUND;
        }
        if (bounds.maxLagMillis() > 0 && lagSeconds * 1000 > bounds.maxLagMillis()) {
            return Ineligibility.LAG_BOUND;
        }
        if (minimumLsn != Lsn.UNKNOWN && !Lsn.reached(replayLsn, minimumLsn)) {
            return Ineligibility.BEHIND_LSN;
        }
        return null;
    }

    /**
     * Asks the replica where it is, over a pooled connection, and records the answer.
     *
     * @param primaryLsn the primary's current position, to compute the byte lag, or {@link Lsn#UNKNOWN}
     * @return whether the replica answered
     */
    boolean check(long primaryLsn, int queryTimeoutSeconds) {
        try (Connection connection = connections.getConnection();
                Statement statement = connection.createStatement()) {
            statement.setQueryTimeout(queryTimeoutSeconds);
            try (ResultSet rs = statement.executeQuery(WalPositions.REPLICA_CHECK_SQL)) {
                rs.next();
                record(
                        rs.getBoolean(1),
                        rs.getString(2),
                        rs.getBoolean(3),
                        rs.getObject(4) == null ? Double.NaN : rs.getDouble(4),
                        primaryLsn);
                defaultIsolation = IsolationLevel.parse(rs.getString(5));
            }
            reachable = true;
            if (breaker.isClosed() || breaker.trialDue()) {
                breaker.onSuccess();
            }
            return true;
        } catch (SQLException e) {
            markFailed();
            return false;
        } finally {
            checked = true;
        }
    }

    void record(
            boolean recovery, String replay, boolean replayedAllReceived, double secondsSinceReplay, long primaryLsn) {
        inRecovery = recovery;
        if (!recovery) {
            // Not a standby (promoted, or a primary under another address): its data is the primary's
            // own. Eligibility refuses it unless the in-recovery check is switched off (benchmarks).
            replayLsn = primaryLsn;
            lagBytes = 0;
            lagSeconds = 0.0;
            return;
        }
        final long replay0 = Lsn.parse(replay);
        // Exactly what the replica says, even if lower than before: a standby restarted after a crash
        // replays again from its last restart point, and reads then see that older state.
        replayLsn = replay0;
        final long bytes = primaryLsn == Lsn.UNKNOWN ? -1 : Lsn.distance(replay0, primaryLsn);
        lagBytes = bytes;
        // An idle primary sends no new transactions, so "time since last replay" grows on a replica
        // that is fully caught up; it only measures lag while there is WAL left to replay.
        lagSeconds = bytes == 0 || replayedAllReceived && bytes <= 0 ? 0.0 : Math.max(0.0, secondsSinceReplay);
    }

    /** Asks the replica how far it has replayed, for the LSN gate; a failure takes it out of rotation. */
    void refreshReplay() {
        try (Connection connection = connections.getConnection()) {
            final long replay = WalPositions.replayPosition(connection);
            if (replay != Lsn.UNKNOWN) {
                observedReplay(replay);
            }
        } catch (SQLException e) {
            markFailed();
        }
    }

    /**
     * Takes the replica out of rotation after a failure: opens (or keeps open) its breaker and drops
     * its pooled connections, which a restarted or killed server has invalidated anyway.
     *
     * @return whether this failure opened the breaker
     */
    public boolean markFailed() {
        reachable = false;
        // Whatever it had replayed is no longer known once it comes back (see record).
        replayLsn = Lsn.UNKNOWN;
        final HikariPoolMXBean pool = ownPool();
        if (pool != null) {
            pool.softEvictConnections();
        }
        return breaker.onFailure();
    }

    /** Raises the known replay position after a check made elsewhere (for example by the LSN gate). */
    void observedReplay(long lsn) {
        if (Lsn.reached(lsn, replayLsn)) {
            replayLsn = lsn;
        }
    }

    /** Throws away a physical connection that must not go back to the pool (one that could not be made read-only again). */
    public void evict(Connection physical) {
        if (connections instanceof HikariDataSource pool) {
            pool.evictConnection(physical);
        }
    }

    @Override
    public String toString() {
        return name + "(" + maskedUrl + ")";
    }
}
