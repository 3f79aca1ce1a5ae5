package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * One physical standby behind a configured replica: what was last learned about it, from the health
 * check's connection when that reached it, or from a connection of the application's pool that did.
 * A replica URL (or data source) can reach several servers (a load-balanced read endpoint, a relay,
 * a multi-host URL); whether a read may run on a connection is decided against the server that
 * connection reached, never against another server behind the same URL.
 *
 * <p>Each field is a single volatile written by whoever asked the server last; a reader may combine
 * values of two answers, which only ever errs towards an older answer. What judges its identity
 * ({@link #record}, {@link #replayed}, {@link #judgeAgainst}) runs under its lock: the replay position
 * and when it was observed must be read as one.
 */
public final class BackendServer {
    private final String key;
    private final String address;
    private final int port;

    private volatile boolean inRecovery = true;
    private volatile long replayLsn = Lsn.UNKNOWN;
    /** {@link System#nanoTime()} of the last full answer ({@link #record}); 0 before. */
    private volatile long checkedAtNanos;
    /** {@link System#nanoTime()} when {@link #replayLsn} was last read. */
    private volatile long replayObservedAt;
    /** {@link System#nanoTime()} of the primary reading the lag was measured against; 0 for none. */
    private volatile long lagBasisNanos;

    private volatile long lagBytes = -1;
    private volatile double lagSeconds = Double.NaN;
    private volatile int defaultIsolation = IsolationLevel.UNKNOWN;
    /** Why the library refuses this server, naming it; {@code null} if it does not. */
    private volatile String problem;
    /** Replayed past a primary position read after it: WAL the primary never wrote (see {@link StandbyIdentity}). */
    private volatile boolean aheadOfPrimary;
    /** Its replay position when a wait for it last timed out; {@link Lsn#UNKNOWN} for none. */
    private volatile long stallMark = Lsn.UNKNOWN;
    /** The primary reading its lag was measured against, {@code null} before the first answer. */
    private volatile PrimaryReading measuredAgainst;
    /** As its last answer said, for judging it again ({@link #judgeAgainst}); {@code null} before the first. */
    private String systemIdentifier;

    private int timeline;
    private String name;

    BackendServer(String key, String address, int port) {
        this.key = key;
        this.address = address;
        this.port = port;
    }

    /** The server's identity: address, port and start time, as {@link WalPositions#serverKey} gives it. */
    String key() {
        return key;
    }

    /**
     * Whether {@code other} is this server in the same run (same port and start time): the registry may
     * have forgotten it and recorded it anew meanwhile, but its replay position never went back. A
     * restarted server is another run, whose replay may start behind what it showed before.
     */
    public boolean sameRun(BackendServer other) {
        return other == this || other != null && key.equals(other.key);
    }

    /** The address the server accepted connections on ({@code inet_server_addr()}); {@code local} for a socket file. */
    public String address() {
        return address;
    }

    /** The port the server accepted connections on ({@code inet_server_port()}). */
    public int port() {
        return port;
    }

    public boolean inRecovery() {
        return inRecovery;
    }

    public long replayLsn() {
        return replayLsn;
    }

    /**
     * Bytes of WAL it had left to replay at its last answer, {@code -1} if unknown: also once a check of
     * the primary failed after the reading it was measured against ({@link PrimaryReading#lagBasis}).
     */
    public long lagBytes() {
        final PrimaryReading reading = measuredAgainst;
        return reading != null && lagBasisNanos != 0 && reading.lagBasis(lagBasisNanos) == 0 ? -1 : lagBytes;
    }

    public double lagSeconds() {
        return lagSeconds;
    }

    public String problem() {
        return problem;
    }

    /** {@link System#nanoTime()} of the primary reading {@link #lagBytes()} was measured against; 0 for none. */
    long lagBasisNanos() {
        return lagBasisNanos;
    }

    int defaultIsolation() {
        return defaultIsolation;
    }

    /** How long ago the server last gave a full answer, in nanoseconds; {@link Long#MAX_VALUE} before the first. */
    long checkAgeNanos() {
        final long at = checkedAtNanos;
        return at == 0 ? Long.MAX_VALUE : System.nanoTime() - at;
    }

    /** {@link System#nanoTime()} of the last full answer, 0 before the first. */
    long checkedAtNanos() {
        return checkedAtNanos;
    }

    /**
     * Records the server's answer to {@link WalPositions#REPLICA_CHECK_SQL} on {@code rs} (positioned on
     * its row), measuring its lag against the primary's reading, and judges its identity.
     *
     * @param name how messages name it: the configured replica and this server's address
     */
    synchronized void record(ResultSet rs, PrimaryReading primary, String name) throws SQLException {
        final long primaryLsn = primary.freshPosition();
        final long primaryReadAt = primary.readAtNanos();
        final boolean recovery = rs.getBoolean(1);
        final long replay = recovery ? Lsn.parse(rs.getString(2)) : primaryLsn;
        final long bytes = !recovery ? 0 : primaryLsn == Lsn.UNKNOWN ? -1 : Lsn.distance(replay, primaryLsn);
        final double seconds = !recovery
                ? 0.0
                : lagSeconds(bytes, rs.getBoolean(3), rs.getObject(4) == null ? Double.NaN : rs.getDouble(4));
        final String receiving = rs.getString(8);
        final int tli = WalPositions.timeline(receiving != null ? receiving : rs.getString(7));
        final long now = System.nanoTime();
        inRecovery = recovery;
        replayLsn = replay;
        lagBytes = bytes;
        lagSeconds = seconds;
        lagBasisNanos = primaryLsn == Lsn.UNKNOWN ? 0 : primaryReadAt;
        defaultIsolation = IsolationLevel.parse(rs.getString(5));
        replayObservedAt = now;
        checkedAtNanos = now;
        measuredAgainst = primary;
        systemIdentifier = rs.getString(6);
        timeline = tli;
        this.name = name;
        // This answer is newer than any primary reading yet: the next one judges it (judgeAgainst).
        aheadOfPrimary = recovery && aheadOfPrimary;
        problem = StandbyIdentity.problem(name, systemIdentifier, tli, recovery, aheadOfPrimary, primary);
    }

    /**
     * Judges again whether it has replayed past the primary, against {@code primary}'s reading, which
     * proves it only if it was asked after the replay position was observed ({@link StandbyIdentity#aheadOfPrimary});
     * updates {@link #problem()}. Nothing before its first answer.
     */
    synchronized void judgeAgainst(PrimaryReading primary) {
        if (name == null) {
            return;
        }
        final long askedAt = primary.askedAtNanos();
        aheadOfPrimary = StandbyIdentity.aheadOfPrimary(
                aheadOfPrimary, inRecovery, replayLsn, replayObservedAt, askedAt, primary.position());
        problem = StandbyIdentity.problem(name, systemIdentifier, timeline, inRecovery, aheadOfPrimary, primary);
    }

    /** Raises the known replay position after asking the server for it alone. */
    synchronized void replayed(long lsn) {
        if (lsn != Lsn.UNKNOWN) {
            if (Lsn.reached(lsn, replayLsn)) {
                replayLsn = lsn;
            }
            replayObservedAt = System.nanoTime();
        }
    }

    /**
     * The seconds of lag a standby reports: only while there is WAL left to replay (an idle primary
     * sends nothing, so "time since the last replay" grows on a caught-up standby); unknown without a
     * primary position when it replayed all it received (caught up or cut off: it cannot tell).
     */
    static double lagSeconds(long bytes, boolean replayedAllReceived, double secondsSinceReplay) {
        return bytes == 0 ? 0.0 : bytes < 0 && replayedAllReceived ? Double.NaN : Math.max(0.0, secondsSinceReplay);
    }

    /** Why this server cannot serve a read needing {@code required} as last known, or {@code null} if it can. */
    ReplicaNode.Ineligibility ineligibility(LagBounds bounds, long required) {
        if (problem != null) {
            return ReplicaNode.Ineligibility.FOREIGN;
        }
        if (bounds.checkRecovery() && !inRecovery) {
            return ReplicaNode.Ineligibility.NOT_IN_RECOVERY;
        }
        final PrimaryReading reading = measuredAgainst;
        final long basis = reading == null ? lagBasisNanos : reading.lagBasis(lagBasisNanos);
        return bounds.judge(checkedAtNanos, basis, lagBytes, lagSeconds, replayLsn, required);
    }

    /** Whether a wait for this server timed out and it has not replayed past where it stood then. */
    boolean stalled() {
        final long mark = stallMark;
        if (mark == Lsn.UNKNOWN) {
            return false;
        }
        if (replayLsn != Lsn.UNKNOWN && Long.compareUnsigned(replayLsn, mark) > 0) {
            stallMark = Lsn.UNKNOWN;
            return false;
        }
        return true;
    }

    /** A wait for this server timed out: remembers where it stood. */
    void markStalled() {
        stallMark = replayLsn;
    }

    @Override
    public String toString() {
        return address + ":" + port;
    }
}
