package io.github.hibernaterouting.routing.internal.consistency;

import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;
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

    private final LongSupplier healthChecked;
    private final PrimaryPosition primary;
    private final AtomicLong highestAnswered = new AtomicLong(Lsn.UNKNOWN);

    /**
     * @param healthChecked the primary's position as the health check last read it, {@link Lsn#UNKNOWN} before
     * @param primary asks the primary for its current (insert) position
     */
    public ReachedPositions(LongSupplier healthChecked, PrimaryPosition primary) {
        this.healthChecked = healthChecked;
        this.primary = primary;
    }

    /**
     * Whether the primary has reached {@code position}, asking it at most once.
     *
     * @throws SQLException if the position is ahead of what is known and the primary cannot be asked
     */
    public boolean reached(long position) throws SQLException {
        if (Lsn.reached(Lsn.max(highestAnswered.get(), healthChecked.getAsLong()), position)) {
            return true;
        }
        final long current = primary.read();
        highestAnswered.accumulateAndGet(current, Lsn::max);
        return Lsn.reached(current, position);
    }
}
