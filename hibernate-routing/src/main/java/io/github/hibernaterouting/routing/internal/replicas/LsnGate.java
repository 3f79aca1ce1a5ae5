package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics.GateOutcome;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Finds a replica that has replayed at least a required WAL position, waiting a short, bounded time
 * for one to get there.
 *
 * <p>The common case costs nothing: the replicas' last known positions (from the health check and
 * from earlier gate checks) are in memory. Only when none is known to be far enough does the gate
 * ask the replicas ({@code pg_last_wal_replay_lsn()}), one at a time and no further than the first
 * that has the position, and then poll them until the wait is over (100 ms by default: replica lag
 * is almost always small).
 *
 * <p>It waits only for replicas that move. When a wait times out, the gate remembers how far each
 * replica it asked had replayed (its <em>stall mark</em>). A later wait waits only if some replica has
 * replayed past its mark since (replay moves again), or has no mark; otherwise no replica is moving
 * towards any position it lacks, and the read goes to the primary at once (outcome {@code stalled}).
 * A marked replica is asked again only once its last known position is older than the wait, so a
 * stall costs most units of work no round trip at all, and a replica that replays again is noticed
 * within one wait (or by the health check). The first replay past a mark clears it. The marks only
 * ever spare a wait: a replica serves only once it is known to have replayed the required position.
 * Thread-safe.
 */
final class LsnGate {
    private final List<ReplicaNode> replicas;
    private final ReplicaSelector selector;
    private final LagBounds bounds;
    private final long pollIntervalNanos;
    private final RoutingMetrics metrics;
    /** The oldest known position a stalled replica is judged by without asking it again. */
    private static final long MAX_STALL_AGE = 100_000_000L;

    /** Per replica index: its replay position when a wait last timed out, {@link Lsn#UNKNOWN} for none. */
    private final AtomicLongArray stallMarks;

    /** Where the next check starts asking, so that the replicas share the checks. */
    private final AtomicInteger nextAsked = new AtomicInteger();

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
        this.stallMarks = new AtomicLongArray(replicas.size());
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
            boolean moving = false;
            // Asked one at a time, from a place that rotates, and no further once one has the position:
            // one round trip for most checks, however many replicas there are.
            final int size = replicas.size();
            final int from = size == 0 ? 0 : Math.floorMod(nextAsked.getAndIncrement(), size);
            for (int i = 0; i < size; i++) {
                final ReplicaNode node = replicas.get((from + i) % size);
                // Only replicas that could serve but for their position are worth asking; a replica
                // that stood still at the last timeout and was asked within the last wait is not asked
                // again: while replay is stalled, units of work do not each pay the round trips.
                if (node.ineligibility(bounds, Lsn.UNKNOWN) == null) {
                    anyCandidate = true;
                    if (!first
                            || !stallMarked(node)
                            || node.replayAgeNanos() >= Math.min(maxWaitNanos, MAX_STALL_AGE)) {
                        node.refreshReplay();
                        final ReplicaNode chosen = selector.choose(required, null, whyNot);
                        if (chosen != null) {
                            movedPastMark(node);
                            metrics.gate(first ? GateOutcome.CHECKED : GateOutcome.WAITED, System.nanoTime() - start);
                            return chosen;
                        }
                    }
                    moving |= movedPastMark(node);
                }
            }
            final ReplicaNode node = selector.choose(required, null, whyNot);
            if (node != null) {
                metrics.gate(first ? GateOutcome.CHECKED : GateOutcome.WAITED, System.nanoTime() - start);
                return node;
            }
            if (first && anyCandidate && !moving) {
                // Every replica stands where it stood when a wait last timed out: nothing to wait for.
                metrics.gate(GateOutcome.STALLED, System.nanoTime() - start);
                return null;
            }
            if (!anyCandidate || System.nanoTime() >= deadline) {
                metrics.gate(GateOutcome.TIMED_OUT, System.nanoTime() - start);
                if (anyCandidate && maxWaitNanos > 0) {
                    markStalled();
                }
                return null;
            }
            first = false;
            LockSupport.parkNanos(Math.min(pollIntervalNanos, Math.max(0, deadline - System.nanoTime())));
        }
    }

    private boolean stallMarked(ReplicaNode node) {
        return stallMarks.get(node.index()) != Lsn.UNKNOWN;
    }

    /** Whether {@code node} has no stall mark, or has replayed past it (then the mark is cleared). */
    private boolean movedPastMark(ReplicaNode node) {
        final long mark = stallMarks.get(node.index());
        if (mark == Lsn.UNKNOWN) {
            return true;
        }
        final long replay = node.replayLsn();
        if (replay != Lsn.UNKNOWN && Long.compareUnsigned(replay, mark) > 0) {
            stallMarks.compareAndSet(node.index(), mark, Lsn.UNKNOWN);
            return true;
        }
        return false;
    }

    /** A wait timed out: remembers where each replica that could serve stood. */
    private void markStalled() {
        for (ReplicaNode node : replicas) {
            if (node.ineligibility(bounds, Lsn.UNKNOWN) == null) {
                stallMarks.set(node.index(), node.replayLsn());
            }
        }
    }
}
