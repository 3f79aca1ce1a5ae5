package io.github.hibernaterouting.routing.internal.consistency;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.function.LongSupplier;

/**
 * This instance's memory of actors' stamps: at most {@code capacity} actors, each remembered for
 * {@code ttl} after its last write.
 *
 * <p>Past capacity no stamp vanishes before its time to live ends. The stamp written longest ago in
 * its segment is dropped, and raises that segment's floor, which every actor of the segment must meet
 * until the dropped stamp's time to live would have ended. The oldest stamp is the one that a replica
 * has most likely replayed already, so the floor rarely keeps a read from a replica; a cache that
 * admits by frequency would instead drop the newest stamps and make the floor the newest position.
 * A dropped "primary only" entry sends the segment's actors without a stamp of their own to the
 * primary until its time ends. Expired stamps are dropped without a floor: after their time to live
 * they are owed nothing.
 *
 * <p>Thread-safe: one lock per segment, held for a few map operations; never waits on anything else.
 */
final class StampMemory {
    /** Segments have at least this many stamps, so that an uneven spread of actors does not drop stamps early. */
    private static final int MIN_SEGMENT_CAPACITY = 256;

    private static final int MAX_SEGMENTS = 64;

    private final Segment[] segments;
    private final long ttlNanos;
    private final LongSupplier nanoClock;

    /**
     * @param capacity how many actors' stamps are kept at most, at least 1
     * @param ttl how long a stamp is kept after its actor's last write
     * @param nanoClock {@link System#nanoTime()} or a test's clock
     */
    StampMemory(int capacity, Duration ttl, LongSupplier nanoClock) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1");
        }
        this.ttlNanos = ttl.toNanos();
        this.nanoClock = nanoClock;
        int count = 1;
        while (count < MAX_SEGMENTS && capacity / (count * 2) >= MIN_SEGMENT_CAPACITY) {
            count *= 2;
        }
        segments = new Segment[count];
        for (int i = 0; i < count; i++) {
            segments[i] = new Segment(capacity / count + (i < capacity % count ? 1 : 0));
        }
    }

    private Segment segment(String actor) {
        final int h = actor.hashCode();
        return segments[(h ^ (h >>> 16)) & (segments.length - 1)];
    }

    /**
     * The position {@code actor}'s reads must reflect as far as this memory knows: its stamp or the
     * floor of dropped stamps, the later; {@link ActorStamps#PRIMARY_ONLY}; or {@link Lsn#UNKNOWN}.
     */
    long required(String actor) {
        return segment(actor).required(actor, nanoClock.getAsLong());
    }

    /**
     * Raises {@code actor}'s stamp to {@code lsn} (a later commit replaces a "primary only" entry).
     *
     * @return how many stamps were dropped before their time to make room
     */
    int advance(String actor, long lsn) {
        return segment(actor).put(actor, lsn, nanoClock.getAsLong());
    }

    /**
     * Sends {@code actor}'s reads to the primary until the entry expires.
     *
     * @return how many stamps were dropped before their time to make room
     */
    int primaryOnly(String actor) {
        return segment(actor).put(actor, ActorStamps.PRIMARY_ONLY, nanoClock.getAsLong());
    }

    /** A stamp and when it was written ({@link System#nanoTime()}). */
    private record Stamp(long lsn, long written) {}

    private final class Segment {
        private final int capacity;
        /** In the order of their last write: the head is the oldest, the first to expire or to be dropped. */
        private final LinkedHashMap<String, Stamp> stamps = new LinkedHashMap<>();

        private boolean hasFloor;
        /** The latest position dropped before its time. */
        private long floor;
        /** When the last of the dropped positions' time to live ends. */
        private long floorUntil;

        private boolean hasPrimaryOnlyFloor;
        private long primaryOnlyUntil;

        Segment(int capacity) {
            this.capacity = capacity;
        }

        synchronized long required(String actor, long now) {
            expire(now);
            final Stamp stamp = stamps.get(actor);
            if (stamp != null) {
                // A write known after a "primary only" one covers it, as the entry itself says.
                return stamp.lsn == ActorStamps.PRIMARY_ONLY
                        ? ActorStamps.PRIMARY_ONLY
                        : hasFloor ? Lsn.max(stamp.lsn, floor) : stamp.lsn;
            }
            if (hasPrimaryOnlyFloor) {
                return ActorStamps.PRIMARY_ONLY;
            }
            return hasFloor ? floor : Lsn.UNKNOWN;
        }

        synchronized int put(String actor, long lsn, long now) {
            expire(now);
            // Removed and put back, so that the map stays in the order of last write.
            final Stamp old = stamps.remove(actor);
            final long value = old == null || old.lsn == ActorStamps.PRIMARY_ONLY || lsn == ActorStamps.PRIMARY_ONLY
                    ? lsn
                    : Lsn.max(old.lsn, lsn);
            stamps.put(actor, new Stamp(value, now));
            int dropped = 0;
            if (stamps.size() > capacity) {
                final Iterator<Stamp> oldest = stamps.values().iterator();
                while (stamps.size() > capacity) {
                    raiseFloor(oldest.next());
                    oldest.remove();
                    dropped++;
                }
            }
            return dropped;
        }

        private void raiseFloor(Stamp dropped) {
            final long until = dropped.written + ttlNanos;
            if (dropped.lsn == ActorStamps.PRIMARY_ONLY) {
                primaryOnlyUntil = hasPrimaryOnlyFloor ? later(primaryOnlyUntil, until) : until;
                hasPrimaryOnlyFloor = true;
            } else {
                floor = hasFloor ? Lsn.max(floor, dropped.lsn) : dropped.lsn;
                floorUntil = hasFloor ? later(floorUntil, until) : until;
                hasFloor = true;
            }
        }

        private void expire(long now) {
            if (hasFloor && now - floorUntil >= 0) {
                hasFloor = false;
                floor = Lsn.UNKNOWN;
            }
            if (hasPrimaryOnlyFloor && now - primaryOnlyUntil >= 0) {
                hasPrimaryOnlyFloor = false;
            }
            if (stamps.isEmpty()) {
                return;
            }
            final Iterator<Stamp> oldest = stamps.values().iterator();
            while (oldest.hasNext()) {
                if (now - (oldest.next().written + ttlNanos) < 0) {
                    return;
                }
                oldest.remove();
            }
        }
    }

    /** The later of two {@link System#nanoTime()} readings. */
    private static long later(long a, long b) {
        return a - b >= 0 ? a : b;
    }
}
