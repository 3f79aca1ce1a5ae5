package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.ReplicaSettings.LoadBalancing;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Picks a replica for a unit of work among the eligible ones: round-robin, or the one with the least
 * WAL left to replay.
 *
 * <p>Thread-safe; a choice reads only volatile state and allocates nothing.
 */
final class ReplicaSelector {
    private final List<ReplicaNode> replicas;
    private final LagBounds bounds;
    private final LoadBalancing loadBalancing;
    private final AtomicInteger next = new AtomicInteger();

    ReplicaSelector(List<ReplicaNode> replicas, LagBounds bounds, LoadBalancing loadBalancing) {
        this.replicas = replicas;
        this.bounds = bounds;
        this.loadBalancing = loadBalancing;
    }

    /**
     * Chooses an eligible replica that has replayed at least {@code minimumLsn}.
     *
     * @param excluded a replica to skip (one that just failed), or {@code null}
     * @param whyNot if not {@code null}, receives in element 0 why no replica was eligible
     * @return the replica, or {@code null} when none is eligible
     */
    ReplicaNode choose(long minimumLsn, ReplicaNode excluded, ReplicaNode.Ineligibility[] whyNot) {
        final int size = replicas.size();
        if (size == 0) {
            return null;
        }
        ReplicaNode.Ineligibility worst = null;
        if (loadBalancing == LoadBalancing.LEAST_LAG) {
            ReplicaNode best = null;
            for (ReplicaNode node : replicas) {
                if (node == excluded) {
                    continue;
                }
                final ReplicaNode.Ineligibility why = node.ineligibility(bounds, minimumLsn);
                if (why != null) {
                    worst = mostTelling(worst, why);
                } else if (best == null || node.lagBytes < best.lagBytes) {
                    best = node;
                }
            }
            if (best == null && whyNot != null) {
                whyNot[0] = worst;
            }
            return best;
        }
        final int start = Math.floorMod(next.getAndIncrement(), size);
        for (int i = 0; i < size; i++) {
            final ReplicaNode node = replicas.get((start + i) % size);
            if (node == excluded) {
                continue;
            }
            final ReplicaNode.Ineligibility why = node.ineligibility(bounds, minimumLsn);
            if (why == null) {
                return node;
            }
            worst = mostTelling(worst, why);
        }
        if (whyNot != null) {
            whyNot[0] = worst;
        }
        return null;
    }

    /** Reports the reason that says most about the replicas as a whole: behind-LSN beats lag beats down. */
    private static ReplicaNode.Ineligibility mostTelling(ReplicaNode.Ineligibility a, ReplicaNode.Ineligibility b) {
        if (a == null) {
            return b;
        }
        return a.ordinal() >= b.ordinal() ? a : b;
    }
}
