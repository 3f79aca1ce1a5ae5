package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;

/** What the health check last read from the primary, with its age: what a standby is measured against. */
interface PrimaryReading {
    /** The primary's WAL write position as last read; {@link Lsn#UNKNOWN} before the first answer. */
    long position();

    /** {@link System#nanoTime()} when {@link #position()} was read; {@code 0} for never. */
    long readAtNanos();

    /**
     * {@link System#nanoTime()} just before the query that read {@link #position()} was sent; {@code 0}
     * for never. A standby position observed before this instant can never be past {@link #position()}
     * if the standby replays this primary's WAL ({@link StandbyIdentity#aheadOfPrimary}). Read it before
     * {@link #position()}: a position read after it is at least the one asked at this instant.
     */
    long askedAtNanos();

    /**
     * {@link System#nanoTime()} when a check of the primary last failed, {@code 0} for never: from then
     * on, a lag measured against a reading from before it does not count ({@link #lagBasis}).
     */
    long failedAtNanos();

    /**
     * {@link #position()} if it is recent enough to measure lag against (no older than lag data may
     * be, and no check of the primary failed since), else {@link Lsn#UNKNOWN}: a stale reading
     * measures nothing, so the lag is unknown, not 0.
     */
    long freshPosition();

    /**
     * {@code basisNanos}, the {@link #readAtNanos()} of the reading a lag was measured against, if that
     * lag still counts, else {@code 0} (none): after a failed check of the primary, the primary may have
     * written any amount since its last reading that such a lag does not include, so it is unknown
     * until a reading after the failure measures it again.
     */
    default long lagBasis(long basisNanos) {
        final long failedAt = failedAtNanos();
        return basisNanos != 0 && (failedAt == 0 || basisNanos - failedAt > 0) ? basisNanos : 0;
    }

    /** The primary's system identifier, {@code null} before the first answer. */
    String systemIdentifier();

    /** The timeline the primary writes on, {@code 0} before the first answer. */
    int timeline();
}
