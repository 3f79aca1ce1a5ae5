package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.internal.metrics.RouteReason;

/** Where a statement goes, and why: the answer of {@link StatementRouter}. */
public enum Route {
    /** Not provably read-only: the primary, after the write policy. */
    WRITE(true, RouteReason.WRITE),
    /** A read inside a transaction that already runs on the primary, or one pinned there by {@code transactions=PRIMARY}. */
    TRANSACTION(true, RouteReason.TRANSACTION),
    /**
     * A read whose transaction must run on the primary because of its isolation level: read-write above
     * READ COMMITTED, or SERIALIZABLE (in a transaction or not).
     */
    ISOLATION(true, RouteReason.ISOLATION),
    /** A read under {@code PRIMARY} from a scope, a session property or the persistence unit. */
    STRATEGY(true, RouteReason.STRATEGY),
    /**
     * A read that checks, before a write, what the unit of work read on a replica: the primary
     * under every strategy (see {@link SessionRouting#onPrimary}).
     */
    VERIFY(true, RouteReason.VERIFY),
    /** A read under {@code PRIMARY} from a query hint. */
    FORCED(true, RouteReason.FORCED),
    /**
     * Session state the classifier cannot follow was changed (see {@link SessionRouting#replicasRuledOut}),
     * or the unit may have created a temporary object, which only the primary has
     * ({@link SessionRouting#temporaryObjects()}).
     */
    SESSION_STATE(true, RouteReason.SESSION_STATE),
    /** A read of a unit of work that wrote, under {@code READ_AFTER_WRITE}. */
    ESCALATED(true, RouteReason.ESCALATED),
    /** A read under {@code REPLICA}: a replica or an error, never the primary. */
    REPLICA_ONLY(false, RouteReason.READ),
    /** A read under {@code STALE_READ}: any eligible replica, no position required. */
    STALE_READ(false, RouteReason.READ),
    /** A read under {@code STALE_READ} after this unit of work wrote. */
    STALE_READ_AFTER_WRITE(false, RouteReason.STALE_READ),
    /** A read under {@code READ_AFTER_WRITE}: a replica at or past the position the caller must see. */
    FRESH_READ(false, RouteReason.READ);

    private final boolean primary;
    private final RouteReason reason;

    Route(boolean primary, RouteReason reason) {
        this.primary = primary;
        this.reason = reason;
    }

    /** Whether the statement runs on the primary. */
    public boolean primary() {
        return primary;
    }

    /** The reason tag of the meters for this route. */
    public RouteReason reason() {
        return reason;
    }
}
