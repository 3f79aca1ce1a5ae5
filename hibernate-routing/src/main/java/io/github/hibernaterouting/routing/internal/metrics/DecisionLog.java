package io.github.hibernaterouting.routing.internal.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The latest routing decisions, for a status page: a fixed ring of primitive slots, so recording
 * allocates nothing. Thread-safe; a reader may see a slot being overwritten, which costs at most one
 * entry of accuracy on a page meant for humans.
 */
public final class DecisionLog {
    static final int SIZE = 64;

    /** One decision as read back. */
    public record Entry(long epochMillis, int node, RouteReason reason) {}

    private final long[] times = new long[SIZE];
    private final int[] nodes = new int[SIZE];
    private final int[] reasons = new int[SIZE];
    private final AtomicLong next = new AtomicLong();

    /** @param node 0 for the primary, 1 + replica index for a replica */
    void record(int node, RouteReason reason) {
        final int slot = (int) (next.getAndIncrement() & (SIZE - 1));
        nodes[slot] = node;
        reasons[slot] = reason.ordinal();
        times[slot] = System.currentTimeMillis();
    }

    /** The recorded decisions, newest first. */
    public List<Entry> newestFirst() {
        final long end = next.get();
        final List<Entry> entries = new ArrayList<>(SIZE);
        for (long i = end - 1; i >= 0 && i >= end - SIZE; i--) {
            final int slot = (int) (i & (SIZE - 1));
            entries.add(new Entry(times[slot], nodes[slot], RouteReason.values()[reasons[slot]]));
        }
        return entries;
    }
}
