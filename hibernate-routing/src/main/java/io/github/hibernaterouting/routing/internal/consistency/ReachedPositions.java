package io.github.hibernaterouting.routing.internal.consistency;

import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * Whether a WAL position received from outside (a client's consistency token) is one the primary
 * has reached. A position ahead of the primary is the commit of no write: reads that need it would
 * wait for replicas that never get there, then use the primary, at every statement.
 *
 * <p>The common case costs nothing: the position is compared with the highest primary position
 * known here, the health check's last reading and this check's own earlier answers. Only a position
 * ahead of that, such as a token of a write through another instance since the last health check,
 * costs one query on the primary; no replica is ever asked. Thread-safe.
 */
public final class ReachedPositions {
    /** Reads the primary's current position. */
    @FunctionalInterface
    public interface PrimaryPosition {
        long read() throws SQLException;
    }

    /** The highest position the primary answered, and the timeline it was on then. */
    private record Answer(int timeline, long position) {}

    private final LongSupplier healthChecked;
    private final IntSupplier timeline;
    private final PrimaryPosition primary;
    private final AtomicReference<Answer> highestAnswered = new AtomicReference<>(new Answer(0, Lsn.UNKNOWN));

    /**
     * @param healthChecked the primary's position as the health check last read it, {@link Lsn#UNKNOWN} before
     * @param timeline the primary's timeline as the health check last read it, {@code 0} before: an answer
     *     from another timeline counts for nothing (after a failover that lost WAL, the new primary may
     *     never reach what the old one answered; every instance then judges a position alike, whether it
     *     started before the failover or after)
     * @param primary asks the primary for its current (insert) position
     */
    public ReachedPositions(LongSupplier healthChecked, IntSupplier timeline, PrimaryPosition primary) {
        this.healthChecked = healthChecked;
        this.timeline = timeline;
        this.primary = primary;
    }

    /**
     * Whether the primary has reached {@code position}, asking it at most once.
     *
     * @throws SQLException if the position is ahead of what is known and the primary cannot be asked
     */
    public boolean reached(long position) throws SQLException {
        final int now = timeline.getAsInt();
        final Answer answer = highestAnswered.get();
        final long answered = answer.timeline() == now ? answer.position() : Lsn.UNKNOWN;
        if (Lsn.reached(Lsn.max(answered, healthChecked.getAsLong()), position)) {
            return true;
        }
        final long current = primary.read();
        highestAnswered.accumulateAndGet(
                new Answer(now, current),
                (before, next) ->
                        before.timeline() == next.timeline() && Lsn.reached(before.position(), next.position())
                                ? before
                                : next);
        return Lsn.reached(current, position);
    }
}
