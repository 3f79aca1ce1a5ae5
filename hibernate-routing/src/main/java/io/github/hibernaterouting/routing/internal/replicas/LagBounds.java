package io.github.hibernaterouting.routing.internal.replicas;

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
}
