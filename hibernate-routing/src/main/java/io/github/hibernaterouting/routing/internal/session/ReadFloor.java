package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaSet;

/**
 * The read floor of one unit of work ({@link SessionRouting#readOnPrimary()}), joined with that of
 * the routing scope it runs in ({@link ScopeFrame#reads()}): a request often uses several units of
 * work, and once one of them read on the primary (or a cache served it), the later ones of the scope
 * read on a replica only once it has replayed the primary's position taken after that read. The
 * position is taken lazily, by the first unit that wants a replica, and kept in the scope for the
 * units after it. The scope is the current one at each call: a unit belongs to the scope it runs in.
 * Confined to the unit's thread.
 */
public final class ReadFloor {
    /** The primary's WAL position after a read of this unit ran there; {@link Lsn#UNKNOWN} before. */
    private long position = Lsn.UNKNOWN;
    /** A read of this unit ran on the primary, or a cache served one, since {@link #position} was last taken. */
    private boolean stale;

    /** A read of the unit ran on the primary, or a cache served one: here and in the unit's scope. */
    void readOnPrimary() {
        stale = true;
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null) {
            scope.reads().readOnPrimary();
        }
    }

    /** Whether a read of the unit, or of a unit of its scope, ran on the primary since the floor was last taken. */
    boolean stale() {
        if (stale) {
            return true;
        }
        final ScopeFrame scope = ScopeFrame.current();
        return scope != null && scope.reads().stale();
    }

    /** The unit's floor or its scope's, whichever is later; {@link Lsn#UNKNOWN} if neither has one. */
    long position() {
        final ScopeFrame scope = ScopeFrame.current();
        return scope == null ? position : Lsn.max(position, scope.reads().floor());
    }

    /**
     * Records the primary's position, taken after every read the unit made there; and as the scope's
     * floor if a unit of the scope read on the primary since the scope's floor was taken (only then: a
     * position taken for this unit's own sake would hold the scope's later units to more than they need).
     */
    void taken(long taken) {
        position = Lsn.max(position, taken);
        stale = false;
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null && scope.reads().stale()) {
            scope.reads().floor(taken);
        }
    }

    /** A unit of the current scope bound {@code replica} for a read: the scope's later units prefer it. */
    static void replicaUsed(ReplicaNode replica) {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null && replica != null) {
            scope.reads().replicaUsed(replica);
        }
    }

    /**
     * The replica an earlier unit of work of the current routing scope read from, if it is one of
     * {@code replicas} and can serve a read that needs {@code required}; else {@code null}. Replica to
     * replica across the units of a request: another replica may be behind what that one showed, and a
     * replica only moves forward. A preference, not a promise (see docs/guarantees.md); behind a URL
     * that reaches several servers, the connection's server may still differ.
     */
    public static ReplicaNode scopeReplica(ReplicaSet replicas, long required) {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null
                && scope.reads().replica() instanceof ReplicaNode preferred
                && replicas.nodes().contains(preferred)
                && preferred.ineligibility(replicas.bounds(), required) == null) {
            return preferred;
        }
        return null;
    }
}
