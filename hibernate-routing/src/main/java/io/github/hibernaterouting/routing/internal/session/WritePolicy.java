package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.ReplicaWriteException;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.ReadYourWritesTracker;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import io.github.hibernaterouting.routing.sql.Classification;

/**
 * What happens before any write, whoever sees it first (the connection routing a statement, or the
 * flush listener before the statement exists): under {@code REPLICA} the write is refused before
 * anything is sent; otherwise the actor's shared marker is stored and the unit of work escalates to
 * the primary. Thread-safe.
 */
public final class WritePolicy {
    private final ReadYourWritesTracker tracker;

    public WritePolicy(ReadYourWritesTracker tracker) {
        this.tracker = tracker;
    }

    /**
     * Prepares {@code unit} for a write under {@code strategy}.
     *
     * @param what the write in words, for the refusal's message ("insert Account", "use a plain JDBC Statement")
     * @throws ReplicaWriteException under {@code REPLICA}; nothing was sent anywhere
     * @throws io.github.hibernaterouting.routing.ConsistencyMarkerException if the shared marker cannot be stored
     */
    public void beforeWrite(SessionRouting unit, Strategy strategy, RouteReason reason, String what) {
        if (strategy == Strategy.REPLICA) {
            throw new ReplicaWriteException(what);
        }
        tracker.beforeWrite();
        unit.escalate(reason);
    }

    /** {@link #beforeWrite(SessionRouting, Strategy, RouteReason, String)} for a statement that is not provably read-only. */
    public void beforeWrite(SessionRouting unit, Strategy strategy, Classification statement) {
        if (strategy == Strategy.REPLICA) {
            throw new ReplicaWriteException("run a statement that is not read-only ("
                    + statement.reason().name() + (statement.detail() == null ? "" : ": " + statement.detail()) + ")");
        }
        beforeWrite(unit, strategy, RouteReason.WRITE, (String) null);
    }
}
