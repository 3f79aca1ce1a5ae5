package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;

/**
 * When a replica may serve reads at all: in recovery (unless that check is off), within the lag
 * bounds, and with lag data no older than {@code staleAfterNanos}; {@code 0} switches a bound off.
 *
 * @param checkRecovery whether a replica must report {@code pg_is_in_recovery()}
 * @param maxLagBytes the most WAL a replica may have left to replay
 * @param maxLagMillis the longest a replica that is behind may have gone without replaying a transaction
 * @param staleAfterNanos the oldest a replica's last successful health check may be: older lag data
 *     counts as unknown ({@link #staleAfter})
 */
public record LagBounds(boolean checkRecovery, long maxLagBytes, long maxLagMillis, long staleAfterNanos) {
    /** Bounds without an age limit on lag data (tests). */
    public LagBounds(boolean checkRecovery, long maxLagBytes, long maxLagMillis) {
        this(checkRecovery, maxLagBytes, maxLagMillis, 0);
    }

    /**
     * How old a replica's last successful health check may be before its lag counts as unknown: the
     * time bound, but never less than three health-check intervals (a bound the check cannot see
     * within is not checked more often by refusing the replica) nor than one second.
     */
    public static long staleAfter(long maxLagMillis, long healthCheckIntervalMillis) {
        return java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                Math.max(Math.max(maxLagMillis, 3 * healthCheckIntervalMillis), 1000));
    }

    /**
     * Whether lag data is too old to count: the standby's last answer ({@code checkedAtNanos}), or the
     * primary reading its lag was measured against ({@code lagBasisNanos}), is older than
     * {@link #staleAfterNanos}, or there is none ({@code 0}); never while the age limit is off.
     */
    boolean stale(long checkedAtNanos, long lagBasisNanos) {
        if (staleAfterNanos <= 0) {
            return false;
        }
        final long now = System.nanoTime();
        return checkedAtNanos == 0
                || now - checkedAtNanos > staleAfterNanos
                || lagBasisNanos == 0
                || now - lagBasisNanos > staleAfterNanos;
    }

    /**
     * Why a standby whose last answer is described by the arguments cannot serve a read needing
     * {@code required}, by these bounds: lag data too old ({@code LAG_UNKNOWN}: its answer, or the
     * primary reading its lag was measured against), over the lag bound, short of the position; or
     * {@code null}. Identity and recovery are the caller's.
     *
     * @param checkedAtNanos {@link System#nanoTime()} of its last answer, {@code 0} for none
     * @param lagBasisNanos {@link System#nanoTime()} of the primary reading its lag was measured against, {@code 0} for none
     */
    ReplicaNode.Ineligibility judge(
            long checkedAtNanos, long lagBasisNanos, long lagBytes, double lagSeconds, long replayLsn, long required) {
        if (stale(checkedAtNanos, lagBasisNanos)) {
            return ReplicaNode.Ineligibility.LAG_UNKNOWN;
        }
        if (maxLagBytes > 0 && (lagBytes < 0 || lagBytes > maxLagBytes)) {
            return ReplicaNode.Ineligibility.LAG_BOUND;
        }
        if (maxLagMillis > 0 && lagSeconds * 1000 > maxLagMillis) {
            return ReplicaNode.Ineligibility.LAG_BOUND;
        }
        // A standby behind at its last answer may have stalled since: it is behind by what was measured
        // plus the answer's age. The Redis marker window relies on this sum staying within the age limit.
        if (maxLagMillis > 0
                && staleAfterNanos > 0
                && lagSeconds > 0
                && lagSeconds * 1e9 + (System.nanoTime() - checkedAtNanos) > staleAfterNanos) {
            return ReplicaNode.Ineligibility.LAG_BOUND;
        }
        if (required != Lsn.UNKNOWN && !Lsn.reached(replayLsn, required)) {
            return ReplicaNode.Ineligibility.BEHIND_LSN;
        }
        return null;
    }
}
