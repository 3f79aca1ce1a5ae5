package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.Strategy;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Read-your-writes bookkeeping of one persistence unit: the WAL position the current scope's reads
 * must reflect, and what happens around a write (the shared marker before it, the commit's position
 * after it).
 *
 * <p>Positions are plain {@code long}s ({@link Lsn}) from the commit to the replica selector; only
 * the public API turns them into tokens. The current scope is the thread's {@link ScopeFrame}.
 * Thread-safe.
 */
public final class ReadYourWritesTracker implements AutoCloseable {
    private final ActorStamps stamps;

    public ReadYourWritesTracker(ActorStamps stamps) {
        this.stamps = stamps;
    }

    /**
     * The WAL position reads in the current scope must reflect: the scope's minimum (position floors
     * included) and its actor's stamp, {@link Lsn#UNKNOWN} if there is none,
     * {@link ActorStamps#PRIMARY_ONLY} if it cannot be known (the marker or the actors' table cannot be
     * read; while the actor has a mutation pending, the primary's position now). The actor is looked up
     * once per scope (memory, Redis, the actors' table).
     *
     * @param heldPrimary the primary connection the unit of work holds, or {@code null}: the stamp is
     *     read on it, so that a unit of work never needs two connections from the primary pool at once
     */
    public long requiredPosition(Connection heldPrimary) {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope == null) {
            return Lsn.UNKNOWN;
        }
        long required = scope.minimum();
        final String actor = scope.actor();
        if (actor != null) {
            final long stamp = scope.resolved(this, () -> resolvedStamp(actor, heldPrimary));
            if (stamp == ActorStamps.PRIMARY_ONLY) {
                return ActorStamps.PRIMARY_ONLY;
            }
            required = Lsn.max(required, stamp);
        }
        return required;
    }

    /**
     * The actor's stamp; while a mutation of the actor is pending (here or on another instance), the
     * primary's position now instead. That mutation may have committed before this read began without
     * its position being stored yet; every commit that returned before now is behind the primary's
     * position now, so a replica that has replayed it serves the read as the primary would. Resolved
     * once per scope: what the actor commits while its scope runs is concurrent with its reads.
     */
    private long resolvedStamp(String actor, Connection heldPrimary) {
        final long stamp = stamps.minimumFor(actor, heldPrimary);
        return stamp == ActorStamps.PENDING ? stamps.primaryPositionNow(heldPrimary) : stamp;
    }

    /**
     * The WAL position a read must reflect whatever its strategy, for reads that require no position
     * of their own ({@code STALE_READ}, {@code REPLICA}): the position floors of the current scopes
     * (a client's consistency token); under a {@code READ_AFTER_WRITE} floor, everything
     * {@link #requiredPosition} holds. {@link Lsn#UNKNOWN} if none.
     *
     * @param heldPrimary as for {@link #requiredPosition}
     */
    public long floorPosition(Connection heldPrimary) {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope == null) {
            return Lsn.UNKNOWN;
        }
        return scope.effectiveFloor() == Strategy.READ_AFTER_WRITE
                ? requiredPosition(heldPrimary)
                : scope.floorPosition();
    }

    /**
     * Before a write of the current scope's actor: stores a pending entry in the shared mutation
     * marker, so that other instances send the actor's reads to the primary until the write's
     * position is there. Once per scope until a commit of the actor's takes the entry; a scope
     * nested in one of the same actor uses the enclosing scope's entry.
     *
     * @throws ConsistencyMarkerException if the marker cannot be stored; nothing was written
     */
    public void beforeWrite() {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null) {
            scope.writing();
        }
        if (!stamps.redisEnabled()) {
            return;
        }
        final String actor = scope == null ? null : scope.actor();
        if (actor == null || scope.marked(this)) {
            return;
        }
        beforeMutation(actor);
    }

    /**
     * Stores {@code actor}'s pending-mutation marker.
     *
     * @throws ConsistencyMarkerException if Redis cannot be reached
     */
    public void beforeMutation(String actor) {
        final String pendingId;
        try {
            pendingId = stamps.beforeMutation(actor);
        } catch (RedisMarker.Unavailable e) {
            throw new ConsistencyMarkerException(e.getMessage(), e);
        }
        // Called from outside (the servlet filter) inside the actor's scope: the first write need not
        // store it again, and the scope's next commit removes this entry. Outside the actor's scope no
        // commit can know it: it counts until the window ends.
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null && actor.equals(scope.actor())) {
            scope.setMarked(this, pendingId);
        }
    }

    /**
     * The mutation of {@code frame} ended: the pending entry it stored in the actor's marker is
     * removed if no commit took it and no write waits for a commit (a {@code POST} that wrote
     * nothing, or answered 404), so that the actor does not read from the primary for a whole window.
     * A failure to remove it is counted and logged; the entry then counts until it expires.
     */
    public void mutationEnded(ScopeFrame frame) {
        final String actor = frame.actor();
        final String id = actor == null ? null : frame.takeUnusedMark(this);
        if (id != null) {
            stamps.endPending(actor, id);
        }
    }

    /** Whether actors' stamps are kept in a table ({@code actor_stamps=TABLE}). */
    public boolean stampsInTable() {
        return stamps.inTable();
    }

    /**
     * Inside the writing transaction, on its connection: raises the current scope's actor's stamp in
     * the table to the position reached so far, so that it commits, or rolls back, with the write.
     */
    public void stampInTransaction(Connection transaction) throws SQLException {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null && scope.actor() != null) {
            stamps.raiseInTransaction(transaction, scope.actor());
        }
    }

    /** Whether anything would consume a commit's position: a scope to record it in, an actor to stamp. */
    public boolean wantsCommitPosition() {
        return ScopeFrame.current() != null;
    }

    /**
     * Records a write just committed on {@code primary}, the connection that committed it (now in
     * auto-commit): reads its position there, raising the actor's stamp in the actors' table in the
     * same statement, and records it in the current scopes (for the response token) and in the actor's
     * stamp in memory and Redis.
     *
     * @throws SQLException if the position cannot be read: see {@link #commitPositionUnknown}
     */
    public void committed(Connection primary) throws SQLException {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null) {
            committed(stamps.commitPosition(primary, scope.actor()));
        }
    }

    /** The actor whose stamp a commit in the current scope raises, or {@code null}. */
    public String committingActor() {
        final ScopeFrame scope = ScopeFrame.current();
        return scope == null ? null : scope.actor();
    }

    /**
     * The position of a write just committed, read on {@code primary} (in auto-commit, outside the
     * write's transaction), raising {@code actor}'s stamp in the actors' table there; for a caller that
     * reads it away from the scope's thread and then records it with {@link #committedAt}.
     *
     * @param actor from {@link #committingActor}, or {@code null}
     */
    public long commitPosition(Connection primary, String actor) throws SQLException {
        return stamps.commitPosition(primary, actor);
    }

    /**
     * Records a write that committed at {@code lsn} in the current scopes and its actor's stamp, as
     * {@link #committed(Connection)} does.
     */
    public void committedAt(long lsn) {
        committed(lsn);
    }

    private void committed(long lsn) {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope == null) {
            return;
        }
        scope.recordCommit(lsn);
        scope.forgetResolved();
        final String actor = scope.actor();
        if (actor != null) {
            // The commit covers the writes made under the scope's pending entries: remove those, no other.
            stamps.advance(actor, lsn, scope.takeMarks(this));
        }
    }

    /**
     * A write committed but its position could not be read: the scope counts as written and the
     * actor's reads on this instance go to the primary until its stamp expires from memory.
     */
    public void commitPositionUnknown() {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope == null) {
            return;
        }
        scope.markWritten();
        scope.forgetResolved();
        final String actor = scope.actor();
        if (actor != null) {
            stamps.primaryOnly(actor);
            // The scope's pending entries stay in Redis until they expire: they are all that keeps the
            // actor's reads through other instances on the primary. A later write stores a new one.
            scope.takeMarks(this);
        }
    }

    /** The stamp of {@code actor} as the primary (or this instance's memory) knows it. */
    public long stampOf(String actor) throws SQLException {
        return stamps.readFromPrimary(actor);
    }

    @Override
    public void close() {
        stamps.close();
    }
}
