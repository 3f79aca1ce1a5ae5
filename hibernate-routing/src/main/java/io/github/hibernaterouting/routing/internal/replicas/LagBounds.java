package io.github.hibernaterouting.routing.internal.replicas;

/**
 * When a replica may serve reads at all: in recovery (unless that check is off), and within the lag
 * bounds; {@code 0} switches a bound off.
 *
 * @param checkRecovery whether a replica must report {@code pg_is_in_recovery()}
 * @param maxLagBytes the most WAL a replica may have left to replay
 * @param maxLagMillis the longest a replica that is behind may have gone without replaying a transaction
 */
public record LagBounds(boolean checkRecovery, long maxLagBytes, long maxLagMillis) {}
