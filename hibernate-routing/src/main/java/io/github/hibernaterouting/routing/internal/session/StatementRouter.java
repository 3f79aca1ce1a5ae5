package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.sql.Classification;

/**
 * The routing decision for one statement, from what is known before it is sent: its
 * classification, the strategy, the unit of work and its transaction. Decides nothing about which
 * replica, or what happens when none can serve ({@code PhysicalConnections} does). Allocates
 * nothing.
 */
public final class StatementRouter {
    private StatementRouter() {}

    /**
     * @param unit the unit of work (asked whether its reads must go to the primary right now, and
     *     whether it or its scope wrote, only when that matters)
     * @param inPrimaryTransaction a transaction is open and already runs on the primary
     * @param transactionPinned a read-write transaction is open and {@code transactions=PRIMARY} pins it to the primary
     * @param isolationPinned the isolation level needs the primary: a read-write transaction above READ
     *        COMMITTED is open (one snapshot on the server that runs its writes), or the level is
     *        SERIALIZABLE, which a hot standby refuses; the caller refuses it under {@code REPLICA}
     */
    public static Route route(
            Classification classification,
            Strategy strategy,
            SessionRouting unit,
            boolean inPrimaryTransaction,
            boolean transactionPinned,
            boolean isolationPinned) {
        if (!classification.replicaSafe()) {
            return Route.WRITE;
        }
        if (unit.readsOnPrimary()) {
            // The lost-update check compares what was read on a replica with the primary.
            return Route.VERIFY;
        }
        if (strategy != Strategy.REPLICA && (unit.replicasRuledOut(classification) || unit.temporaryObjects())) {
            // The classifier's verdict assumed session state the unit of work has changed, or a
            // temporary object of the unit's, which only the primary has, may be read. (Under REPLICA
            // the caller refuses the read, see UnitOfWorkRouter.)
            return Route.SESSION_STATE;
        }
        if (inPrimaryTransaction) {
            // Its reads must see its own writes.
            return Route.TRANSACTION;
        }
        return switch (strategy) {
            case PRIMARY -> classification.routingHint() != null ? Route.FORCED : Route.STRATEGY;
            // REPLICA and STALE_READ accept stale data by definition: no required position of their own
            // (a client's position floor still holds, see ReadYourWritesTracker.floorPosition).
            case REPLICA -> Route.REPLICA_ONLY;
            case STALE_READ -> {
                if (isolationPinned) {
                    yield Route.ISOLATION;
                }
                yield unit.escalated() ? Route.STALE_READ_AFTER_WRITE : Route.STALE_READ;
            }
            case READ_AFTER_WRITE -> {
                if (unit.hasWritten()) {
                    yield Route.ESCALATED;
                }
                if (isolationPinned) {
                    yield Route.ISOLATION;
                }
                yield transactionPinned ? Route.TRANSACTION : Route.FRESH_READ;
            }
        };
    }
}
