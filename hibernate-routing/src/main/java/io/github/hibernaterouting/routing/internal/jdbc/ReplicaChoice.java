package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.ReplicaSettings.ReplicaFailure;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.consistency.ActorStamps;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics.GateOutcome;
import io.github.hibernaterouting.routing.internal.replicas.BackendServer;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaSet;
import io.github.hibernaterouting.routing.internal.session.ReadFloor;
import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
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

    /** The most connections one read borrows from one replica to find a server behind its URL that can serve it. */
    private static final int MAX_OTHER_CONNECTIONS = 8;

    private ReplicaChoice() {}

    /**
     * A replica for a read, bound now if needed; the primary if none can serve and the policy allows.
     *
     * @param mandatory under {@code REPLICA}: never the primary
     * @param required the WAL position the read must reflect, {@link Lsn#UNKNOWN} for none,
     *        {@link ActorStamps#PRIMARY_ONLY} while the actor's stamp cannot be known; raised to the unit
     *        of work's read floor after one of its reads fell back to the primary
     */
    static Connection use(
            PhysicalConnections p, SessionRouting unit, boolean mandatory, RouteReason reason, long required)
            throws SQLException {
        if (p.replica != null) {
            return bound(p, unit, mandatory, reason);
        }
        if (required == ActorStamps.PRIMARY_ONLY) {
            return fallBack(p, unit, mandatory, RouteReason.PENDING_WRITE, null, null);
        }
        if (unit.replicaLost()) {
            return fallBack(p, unit, mandatory, unit.replicaLostReason(), null, null);
        }
        if (!mandatory) {
            // Monotonic reads: a read of this unit of work on the primary (for any reason) may have seen
            // what no replica has replayed yet, so a replica must be at least that far along. REPLICA
            // asks for a replica whatever it read before, so it never has a floor.
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
                final RouteReason lost = ReplicaNode.Ineligibility.fallbackReason(why);
                unit.loseReplica(lost);
                return fallBack(p, unit, mandatory, lost, null, null);
            }
        }
        final boolean sticky = node != null;
        RouteReason servedReason = reason;
        // How many other connections of a replica a read may take when its server cannot serve.
        int others = MAX_OTHER_CONNECTIONS;
        if (node == null) {
            // Across the units of work of a routing scope (a request), the replica an earlier one read from.
            node = ReadFloor.scopeReplica(p.replicas, required);
            node = node != null ? node : p.replicas.choose(required, null, whyNot);
            if (required != Lsn.UNKNOWN) {
                if (node != null && !node.severalServers()) {
                    // Behind a URL that reaches several servers, the connection's server decides.
                    p.metrics.gate(GateOutcome.KNOWN, 0);
                } else if (node == null && whyNot[0] == ReplicaNode.Ineligibility.BEHIND_LSN && !unit.lsnWaited()) {
                    // At most one wait per unit of work: its later reads take the replicas' known
                    // positions, or the primary.
                    unit.lsnWaited(true);
                    node = p.replicas.await(required, p.lsnWaitNanos, whyNot);
                    servedReason = RouteReason.LSN_WAIT;
                }
            }
            if (node == null && whyNot[0] != null && whyNot[0] != ReplicaNode.Ineligibility.DOWN) {
                // The health check's server cannot serve (behind, over the bound, not a standby of this
                // primary); the replica's connections may reach others (a load-balanced URL, one that
                // reaches the primary too): now and then, one read tries a connection other than its own.
                node = p.replicas.discovering(required);
                others = node != null ? 1 : others;
            }
        }
        SQLException failure = null;
        ReplicaNode failed = null;
        RouteReason failureReason = null;
        for (int attempt = 0; node != null && attempt <= p.replicas.nodes().size(); attempt++) {
            Connection physical;
            try {
                physical = admitted(
                        p, unit, node, node.connections().getConnection(), mandatory, required, others, whyNot);
                if (physical != null) {
                    physical = p.configure(physical, node);
                }
            } catch (SQLException e) {
                // A pool whose connections are all in use is busy, not failed: its breaker stays
                // closed and its connections stay; the health check, on a connection of its own,
                // says whether the server answers.
                failureReason = node.busy(e) ? RouteReason.REPLICA_BUSY : RouteReason.REPLICA_DOWN;
                if (failureReason == RouteReason.REPLICA_BUSY) {
                    p.metrics.replicaBusy(node.metricsNode());
                } else {
                    replicaFailed(p, node, e);
                }
                failure = e;
                failed = node;
                whyNot[0] = ReplicaNode.Ineligibility.DOWN;
                if (p.failurePolicy == ReplicaFailure.FAIL || mandatory || sticky) {
                    // Under FALLBACK a unit of work that already read from this replica moves to the
                    // primary, never to another replica that could be behind what it read.
                    if (sticky) {
                        unit.loseReplica(failureReason);
                    }
                    break;
                }
                // Nothing ran on the failed replica yet, so another one is as good.
                node = p.replicas.choose(required, node, whyNot);
                continue;
            }
            if (physical == null) {
                // The servers its connections reached cannot serve this read (whyNot says why).
                if (sticky || mandatory) {
                    if (sticky) {
                        unit.loseReplica(ReplicaNode.Ineligibility.fallbackReason(whyNot[0]));
                    }
                    break;
                }
                final ReplicaNode.Ineligibility why = whyNot[0];
                node = p.replicas.choose(required, node, whyNot);
                if (node == null) {
                    whyNot[0] = why;
                }
                continue;
            }
            p.replicaBound(physical, node, unit.replicaServer());
            unit.replica(node);
            return replicaUsed(p, unit, servedReason);
        }
        return fallBack(
                p,
                unit,
                mandatory,
                failureReason != null ? failureReason : ReplicaNode.Ineligibility.fallbackReason(whyNot[0]),
                failure,
                failed);
    }

    /**
     * The replica connection already bound, for a read: it stays bound between statements outside a
     * transaction under a connection handling mode that holds the connection (Spring's
     * {@code DELAYED_ACQUISITION_AND_HOLD}, {@code IMMEDIATE_ACQUISITION_AND_HOLD}), or until the routed
     * connection is released otherwise. Monotonic reads, as when a replica is bound anew: if the unit
     * of work read on the primary (or from a cache) since, the connection serves only if its server has
     * replayed the primary's position now; else the read goes to the primary, and so do the unit's
     * later reads (another replica could be behind what this one showed).
     *
     * <p>A statement of a transaction that runs on the replica connection (a read-only or snapshot
     * transaction, one begun with SQL) stays there whatever the unit read elsewhere: a transaction
     * runs on one server from start to end, and what it reads is its own snapshot. Under
     * {@code REPLICA} ({@code mandatory}) there is no floor.
     */
    private static Connection bound(PhysicalConnections p, SessionRouting unit, boolean mandatory, RouteReason reason)
            throws SQLException {
        if (mandatory || p.replicaTransaction || p.control.transaction() == p.replica) {
            return replicaUsed(p, unit, reason);
        }
        if (unit.replicaLost()) {
            return fallBack(p, unit, false, unit.replicaLostReason(), null, null);
        }
        if (!unit.readFloorStale()) {
            // The connection was admitted at or past the floor, and its server only moves forward.
            return replicaUsed(p, unit, reason);
        }
        final RouteReason behind = RouteReason.LSN_FALLBACK;
        if (!takeReadFloor(p, unit)) {
            return fallBack(p, unit, false, behind, null, null);
        }
        if (replayed(p, unit, unit.readFloor())) {
            return replicaUsed(p, unit, reason);
        }
        unit.loseReplica(behind);
        return fallBack(p, unit, false, behind, null, null);
    }

    /**
     * Whether the server of the bound replica connection has replayed {@code floor}: as last known of
     * the server that connection reached (the connection cannot outlive it, and its replay position
     * only grows while it runs), else as that server says on the connection itself, waiting for it as
     * the LSN gate does, at most once per unit of work. Asked only in auto-commit: on a connection that
     * a pool hands out outside it, the query would join whatever the earlier reads left open there, so
     * the read goes to the primary instead.
     */
    private static boolean replayed(PhysicalConnections p, SessionRouting unit, long floor) {
        final BackendServer server = p.replicaServer;
        if (server != null && server.inRecovery() && Lsn.reached(server.replayLsn(), floor)) {
            return true;
        }
        try {
            if (!p.replica.getAutoCommit()) {
                return false;
            }
            final long start = System.nanoTime();
            final boolean wait = !unit.lsnWaited() && p.lsnWaitNanos > 0;
            try (Statement statement = p.replica.createStatement()) {
                while (!Lsn.reached(WalPositions.replayPosition(statement), floor)) {
                    final long left = start + p.lsnWaitNanos - System.nanoTime();
                    if (!wait || left <= 0) {
                        return false;
                    }
                    unit.lsnWaited(true);
                    LockSupport.parkNanos(Math.min(p.replicas.lsnPollNanos(), left));
                }
                return true;
            }
        } catch (SQLException e) {
            LOG.debug("Could not read the replay position of {} ({})", p.replicaNode, e.getMessage());
            return false;
        }
    }

    /**
     * {@code physical}, just borrowed from {@code node}, if the server it reached can serve this read;
     * else another connection of the node that reached a server that can (behind a load-balanced URL
     * the next connection may reach another server), or {@code null} with {@code whyNot[0]} saying why
     * not. Every connection it does not return is closed.
     *
     * <p>Monotonic reads: a unit of work whose earlier read ran on another server behind the URL, or on
     * this one before it restarted (a standby that crashed can come back behind what it showed), may
     * have seen what this one has not replayed yet. That server's position after the read is not
     * known, so the primary's position now (which no standby of it can be past) becomes the unit's
     * floor, as after a read on the primary.
     *
     * @param others how many other connections it may take when the server {@code physical} reached cannot serve
     */
    private static Connection admitted(
            PhysicalConnections p,
            SessionRouting unit,
            ReplicaNode node,
            Connection physical,
            boolean mandatory,
            long required,
            int others,
            ReplicaNode.Ineligibility[] whyNot)
            throws SQLException {
        final List<Connection> held = new ArrayList<>(2);
        final Set<BackendServer> refused = new HashSet<>(2);
        Connection candidate = physical;
        try {
            for (int attempt = 0; ; attempt++) {
                final BackendServer server = p.replicas.serverOf(node, candidate);
                if (!refused.contains(server)) {
                    long need = required;
                    final BackendServer previous = unit.replicaServer();
                    // Not "while the URL is known to reach several servers": the registry forgets a server
                    // that gave no answer for minutes, and the health check's server when its connection
                    // reaches another (a restart makes a new one), so one known server now says nothing of
                    // where the unit read before.
                    if (!mandatory && previous != null && !previous.sameRun(server)) {
                        if (!takeReadFloor(p, unit)) {
                            whyNot[0] = ReplicaNode.Ineligibility.BEHIND_LSN;
                            held.add(candidate);
                            return null;
                        }
                        need = Lsn.max(need, unit.readFloor());
                    }
                    final long wait =
                            refused.isEmpty() && !unit.lsnWaited() && need != Lsn.UNKNOWN ? p.lsnWaitNanos : 0;
                    final ReplicaNode.Ineligibility why = p.replicas.admit(node, server, candidate, need, wait);
                    if (why == null) {
                        unit.replicaServer(server);
                        final Connection admitted = candidate;
                        candidate = null;
                        return admitted;
                    }
                    if (why == ReplicaNode.Ineligibility.BEHIND_LSN && wait > 0) {
                        unit.lsnWaited(true);
                    }
                    whyNot[0] = why;
                    refused.add(server);
                    if (why == ReplicaNode.Ineligibility.FOREIGN || why == ReplicaNode.Ineligibility.NOT_IN_RECOVERY) {
                        // Not a standby of this primary, and will not be soon: its connection leaves the pool.
                        node.evictOwn(candidate);
                    }
                }
                held.add(candidate);
                // Held now: if borrowing another fails, it is closed once, with the others.
                candidate = null;
                if (attempt >= others) {
                    return null;
                }
                candidate = p.replicas.anotherConnection(node, held);
                if (candidate == null) {
                    return null;
                }
            }
        } catch (SQLException | RuntimeException e) {
            if (candidate != null) {
                held.add(candidate);
            }
            throw e;
        } finally {
            ReplicaSet.closeAll(held);
        }
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
        // FAIL surfaces a replica that cannot give a connection (it failed, its breaker is open, or
        // its pool is busy); a replica that is not ready yet for this read (a pending marker, a
        // position not replayed within the wait, the lag bound) sends it to the primary, as promised.
        final boolean cannotConnect =
                failure != null || reason == RouteReason.REPLICA_DOWN || reason == RouteReason.REPLICA_BUSY;
        if (mandatory || p.failurePolicy == ReplicaFailure.FAIL && cannotConnect) {
            final String message = (reason == RouteReason.REPLICA_BUSY && node != null
                            ? "Replica " + node + " could not give a connection in time: its pool is busy (all its"
                                    + " connections are in use, the server answers; size the pool with "
                                    + RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE
                                    + ", or where the data source is defined): " + failure.getMessage()
                            : failure != null
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
        unit.readOnPrimary();
        return primary;
    }

    /**
     * Takes the primary's WAL position as the unit of work's read floor: every read it made on the
     * primary has completed, so every commit those reads saw is behind this position.
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
