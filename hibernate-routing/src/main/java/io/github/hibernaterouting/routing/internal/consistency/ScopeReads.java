package io.github.hibernaterouting.routing.internal.consistency;

/**
 * Monotonic reads across the units of work of one routing scope ({@link ScopeFrame#reads()}): a
 * request often uses several EntityManagers (Spring without open-session-in-view, Quarkus'
 * transaction- and request-scoped sessions), and a later one must not read older data than an
 * earlier one read on the primary, or from a cache. What one frame's units read is recorded in it
 * and in every enclosing frame, so that the enclosing scopes' later units keep to it too.
 *
 * <p>Confined to the thread of its frame, like the frame; {@code volatile} only so that a frame
 * looked at from another thread (a diagnostic) shows what its thread wrote.
 */
public final class ScopeReads {
    /** The reads of the enclosing frame, or {@code null} for the outermost. */
    private final ScopeReads parent;
    /** A unit of work of this frame, or of a nested one, read on the primary since {@link #floor} was last taken. */
    private volatile boolean stale;
    /** The primary's position taken after the reads on the primary of this frame's units; {@link Lsn#UNKNOWN} before. */
    private volatile long floor = Lsn.UNKNOWN;
    /** The replica the latest replica read of a unit of this frame, or of a nested one, was bound to; {@code null} before. */
    private volatile Object replica;

    ScopeReads(ScopeReads parent) {
        this.parent = parent;
    }

    /**
     * A unit of work of this frame read on the primary, or a cache served it: it may have seen what no
     * replica has replayed yet. The later units of this frame and of the enclosing ones read on a
     * replica only once it has replayed the primary's position taken after that read
     * ({@link #floor(long)}), which a unit takes lazily, when it wants a replica.
     */
    public void readOnPrimary() {
        for (ScopeReads reads = this; reads != null; reads = reads.parent) {
            reads.stale = true;
        }
    }

    /** Whether a unit of work of this frame or an enclosing one read on the primary since the floor was last taken. */
    public boolean stale() {
        for (ScopeReads reads = this; reads != null; reads = reads.parent) {
            if (reads.stale) {
                return true;
            }
        }
        return false;
    }

    /** The position a replica must have replayed to serve a unit of work of this frame; {@link Lsn#UNKNOWN} if none. */
    public long floor() {
        long latest = Lsn.UNKNOWN;
        for (ScopeReads reads = this; reads != null; reads = reads.parent) {
            latest = Lsn.max(latest, reads.floor);
        }
        return latest;
    }

    /**
     * Records the primary's position, taken on the frame's thread after every read its units (and
     * those of the enclosing frames) made there: it covers them all, so it is the floor of each.
     */
    public void floor(long position) {
        for (ScopeReads reads = this; reads != null; reads = reads.parent) {
            reads.floor = Lsn.max(reads.floor, position);
            reads.stale = false;
        }
    }

    /**
     * A unit of work of this frame bound {@code replica} (a replica of its persistence unit) for a
     * read: the later units of this frame and of the enclosing ones prefer it ({@link #replica()}).
     */
    public void replicaUsed(Object replica) {
        for (ScopeReads reads = this; reads != null; reads = reads.parent) {
            reads.replica = replica;
        }
    }

    /**
     * The replica the latest replica read of this frame's units of work was bound to, or {@code null}:
     * another replica may be behind what it showed, and a replica only moves forward, so a later unit
     * of the scope prefers it while it can serve. A preference, not a promise: when it cannot serve,
     * another replica does.
     */
    public Object replica() {
        for (ScopeReads reads = this; reads != null; reads = reads.parent) {
            if (reads.replica != null) {
                return reads.replica;
            }
        }
        return null;
    }
}
