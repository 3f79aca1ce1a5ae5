package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics.GateOutcome;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Finds a replica that has replayed at least a required WAL position, waiting a short, bounded time
 * for one to get there.
 *
 * <p>The common case costs nothing: the replicas' last known positions (from the health check and
 * from earlier gate checks) are in memory. Only when none is known to be far enough does the gate
 * ask the replicas ({@code pg_last_wal_replay_lsn()}), and then poll them until the wait is over
 * (100 ms by default: replica lag is almost always small). Thread-safe.
 */
final class LsnGate {
    private final List<ReplicaNode> replicas;
    private final ReplicaSelector selector;
    private final LagBounds bounds;
    private final long pollIntervalNanos;
    private final RoutingMetrics metrics;

    LsnGate(
            List<ReplicaNode> replicas,
            ReplicaSelector selector,
            LagBounds bounds,
            long pollIntervalNanos,
            RoutingMetrics metrics) {
        this.replicas = replicas;
        this.selector = selector;
        this.bounds = bounds;
        this.pollIntervalNanos = pollIntervalNanos;
        this.metrics = metrics;
    }

    /**
     * A replica that has replayed {@code required}, asking and waiting if needed, or {@code null}.
     *
     * @param maxWaitNanos how long to wait at most (the worker API passes its own bound)
     */
    ReplicaNode await(long required, long maxWaitNanos, ReplicaNode.Ineligibility[] whyNot) {
        final long start = System.nanoTime();
        final long deadline = start + maxWaitNanos;
        boolean first = true;
        while (true) {
            boolean anyCandidate = false;
            for (ReplicaNode node : replicas) {
                // Only replicas that could serve but for their position are worth asking.
                if (node.ineligibility(bounds, Lsn.UNKNOWN) == null) {
                    anyCandidate = true;
                    node.refreshReplay();
                }
            }
            final ReplicaNode node = selector.choose(required, null, whyNot);
            if (node != null) {
                metrics.gate(first ? GateOutcome.CHECKED : GateOutcome.WAITED, System.nanoTime() - start);
                return node;
            }
            if (!anyCandidate || System.nanoTime() >= deadline) {
                metrics.gate(GateOutcome.TIMED_OUT, System.nanoTime() - start);
                return null;
            }
            first = false;
            LockSupport.parkNanos(Math.min(pollIntervalNanos, Math.max(0, deadline - System.nanoTime())));
        }
    }
}
