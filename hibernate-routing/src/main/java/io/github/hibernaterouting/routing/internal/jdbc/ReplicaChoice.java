package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.ReplicaSettings.ReplicaFailure;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.consistency.ActorStamps;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics.GateOutcome;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import java.sql.Connection;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binding a replica for a read of a routed connection ({@link PhysicalConnections}): the unit of
 * work's own replica, or an eligible one at or past the required position and the unit's read floor,
 * waiting for one if needed; and the failure policy when none can serve. Stateless: everything it
 * needs and changes is the routed connection's.
 */
final class ReplicaChoice {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaChoice.class);

    private ReplicaChoice() {}

    /**
     * A replica for a read, bound now if needed; the primary if none can serve and the policy allows.
     *
     * @param mandatory under {@code REPLICA}: never the primary
     * @param required the WAL position the read must reflect, {@link Lsn#UNKNOWN} for none,
     *        {@link ActorStamps#PRIMARY_ONLY} while the actor has a mutation pending; raised to the unit
     *        of work's read floor after one of its reads fell back to the primary
     */
    static Connection use(
            PhysicalConnections p, SessionRouting unit, boolean mandatory, RouteReason reason, long required)
            throws SQLException {
        if (p.replica != null) {
            return replicaUsed(p, unit, reason);
        }
        if (required == ActorStamps.PRIMARY_ONLY) {
            return fallBack(p, unit, mandatory, RouteReason.PENDING_WRITE, null, null);
        }
        if (unit.replicaLost()) {
            return fallBack(p, unit, mandatory, RouteReason.REPLICA_DOWN, null, null);
        }
        if (!mandatory) {
            // Monotonic reads: a read of this unit of work that fell back to the primary may have seen
            // what no replica has replayed yet, so a replica must be at least that far along. REPLICA
            // never falls back, so it never has a floor.
            if (unit.readFloorStale() && p.replicas.anyEligible() && !takeReadFloor(p, unit)) {
                return fallBack(p, unit, false, RouteReason.LSN_FALLBACK, null, null);
            }
            required = Lsn.max(required, unit.readFloor());
        }
        final ReplicaNode.Ineligibility[] whyNot = new ReplicaNode.Ineligibility[1];
        ReplicaNode node = unit.replica();
        if (node != null) {
            final ReplicaNode.Ineligibility why = node.ineligibility(p.replicas.bounds(), required);
            if (why != null) {
                // The replica this unit of work read from is gone, too far behind, or short of the
                // required position; another one could be behind what was already read, so only the
                // primary keeps reads monotonic.
                unit.loseReplica();
                return fallBack(p, unit, mandatory, ReplicaNode.Ineligibility.fallbackReason(why), null, null);
            }
        }
        final boolean sticky = node != null;
        RouteReason servedReason = reason;
        if (node == null) {
            node = p.replicas.choose(required, null, whyNot);
            if (required != Lsn.UNKNOWN) {
                if (node != null) {
                    p.metrics.gate(GateOutcome.KNOWN, 0);
                } else if (whyNot[0] == ReplicaNode.Ineligibility.BEHIND_LSN) {
                    node = p.replicas.await(required, p.lsnWaitNanos, whyNot);
                    servedReason = RouteReason.LSN_WAIT;
                }
            }
        }
        SQLException failure = null;
        ReplicaNode failed = null;
        for (int attempt = 0; node != null && attempt <= p.replicas.nodes().size(); attempt++) {
            final Connection physical;
            try {
                physical = p.configure(node.connections().getConnection(), node);
            } catch (SQLException e) {
                replicaFailed(p, node, e);
                failure = e;
                failed = node;
                whyNot[0] = ReplicaNode.Ineligibility.DOWN;
                if (p.failurePolicy == ReplicaFailure.FAIL || mandatory || sticky) {
                    // Under FALLBACK a unit of work that already read from this replica moves to the
                    // primary, never to another replica that could be behind what it read.
                    if (sticky) {
                        unit.loseReplica();
                    }
                    break;
                }
                // Nothing ran on the failed replica yet, so another one is as good.
                node = p.replicas.choose(required, node, whyNot);
                continue;
            }
            p.replicaBound(physical, node);
            unit.replica(node);
            return replicaUsed(p, unit, servedReason);
        }
        return fallBack(p, unit, mandatory, ReplicaNode.Ineligibility.fallbackReason(whyNot[0]), failure, failed);
    }

    private static Connection replicaUsed(PhysicalConnections p, SessionRouting unit, RouteReason reason)
            throws SQLException {
        p.metrics.statement(p.replicaNode.metricsNode(), reason);
        unit.lastStatementOnReplica(true);
        p.last = p.replica;
        if (!p.settings.isEmpty() && p.settings.missingOn(false)) {
            // Inside a transaction a setting must end with it (SET LOCAL) or be undone by its rollback (SET).
            p.replicaTransactionWanted();
            p.settings.carryTo(p.replica, false, "replica " + p.replicaNode);
        }
        return p.replica;
    }

    private static void replicaFailed(PhysicalConnections p, ReplicaNode node, SQLException e) {
        p.metrics.replicaFailure(node.metricsNode());
        if (node.markFailed()) {
            LOG.warn("Replica {} failed to give a connection ({}); its circuit breaker is open", node, e.getMessage());
        }
    }

    private static Connection fallBack(
            PhysicalConnections p,
            SessionRouting unit,
            boolean mandatory,
            RouteReason reason,
            SQLException failure,
            ReplicaNode node)
            throws SQLException {
        if (mandatory || p.failurePolicy == ReplicaFailure.FAIL) {
            final String message = (failure != null
                            ? "Replica " + (node != null ? node : "") + " could not give a connection: "
                                    + failure.getMessage()
                            : "No replica can serve this read (" + reason.tag + ")")
                    + (mandatory
                            ? "; strategy REPLICA never moves reads to the primary. Use Strategy.READ_AFTER_WRITE to allow it"
                            : "; " + RoutingSettings.REPLICA_FAILURE
                                    + "=FAIL surfaces this. Set it to FALLBACK to use another replica or the primary");
            throw new SQLException(message, "08001", failure);
        }
        p.metrics.fallback(reason);
        final Connection primary = p.usePrimary(unit, reason);
        unit.fellBackToPrimary();
        return primary;
    }

    /**
     * Takes the primary's WAL position as the unit of work's read floor: every read it made on the
     * primary by fallback has completed, so every commit those reads saw is behind this position.
     * Taken only when a replica could be used at all, on the bound primary connection if there is one.
     *
     * @return whether the position could be read; if not, the read stays on the primary
     */
    private static boolean takeReadFloor(PhysicalConnections p, SessionRouting unit) {
        try {
            if (p.primary != null) {
                unit.readFloor(WalPositions.insertPosition(p.primary));
            } else {
                try (Connection connection = p.primarySource.getConnection()) {
                    unit.readFloor(WalPositions.insertPosition(connection));
                }
            }
            return true;
        } catch (SQLException e) {
            LOG.debug(
                    "Could not read the primary's WAL position for a unit of work that fell back ({})", e.getMessage());
            return false;
        }
    }
}
