package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;

/** What the health check last read from the primary, with its age: what a standby is measured against. */
interface PrimaryReading {
    /** The primary's WAL write position as last read; {@link Lsn#UNKNOWN} before the first answer. */
    long position();

    /** {@link System#nanoTime()} when {@link #position()} was read; {@code 0} for never. */
    long readAtNanos();

    /**
     * {@link #position()} if it is recent enough to measure lag against (no older than lag data may
     * be), else {@link Lsn#UNKNOWN}: a stale reading measures nothing, so the lag is unknown, not 0.
     */
    long freshPosition();

    /** The primary's system identifier, {@code null} before the first answer. */
    String systemIdentifier();

    /** The timeline the primary writes on, {@code 0} before the first answer. */
    int timeline();
}
