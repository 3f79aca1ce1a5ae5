package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingSettings.ReplicaFailure;
import io.github.hibernaterouting.routing.internal.consistency.ActorStamps;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics.GateOutcome;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaSet;
import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import io.github.hibernaterouting.routing.sql.Classification;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The physical connections behind one routed connection, bound lazily (the primary, and at most one
 * replica), and the JDBC state they must share: auto-commit, read-only, isolation, schema, and the
 * carried settings.
 *
 * <p>Binding a replica chooses one (the unit of work's own, or an eligible one at or past the
 * required position, waiting for one if needed) and applies the failure policy when none can serve.
 * Not thread-safe, like the routed connection.
 */
final class PhysicalConnections {
    private static final Logger LOG = LoggerFactory.getLogger(PhysicalConnections.class);
    private final DataSource primarySource;
    private final ReplicaSet replicas;
    private final ReplicaFailure failurePolicy;
    private final long lsnWaitNanos;
    private final RoutingMetrics metrics;
    final CarriedSettings settings = new CarriedSettings();

    boolean autoCommit = true;
    boolean readOnly;
    Integer isolation;
    String schema;

    Connection primary;
    Connection replica;
    ReplicaNode replicaNode;
    /**
     * The replica connection runs a transaction of its own (auto-commit off). {@code false} while a
     * read-write transaction's reads run there statement by statement; see {@link #replicaTransactionNeeded}.
     */
    boolean replicaTransaction;
    /** The physical connection that ran the last statement. */
    Connection last;
    /**
     * The routing generation: changes whenever something changes that can send a statement prepared
     * earlier elsewhere (a write, a transaction's begin or end, a physical connection bound or
     * released, a setting that ran, read-only, the isolation level). A {@link RoutedStatement} routes
     * itself again before an execution only when it changed, so the common case costs one comparison.
     */
    int generation;

    PhysicalConnections(
            DataSource primarySource,
            ReplicaSet replicas,
            ReplicaFailure failurePolicy,
            long lsnWaitNanos,
            RoutingMetrics metrics) {
        this.primarySource = primarySource;
        this.replicas = replicas;
        this.failurePolicy = failurePolicy;
        this.lsnWaitNanos = lsnWaitNanos;
        this.metrics = metrics;
    }

    /** Sets read-only mode for the routed connection, and on the bound primary (a replica connection is read-only anyway). */
    void readOnly(boolean readOnly) throws SQLException {
        this.readOnly = readOnly;
        generation++;
        if (primary != null) {
            primary.setReadOnly(readOnly);
        }
    }

    /** Sets the isolation level for the routed connection and every bound physical connection. */
    void isolation(int level) throws SQLException {
        isolation = level;
        generation++;
        if (primary != null) {
            primary.setTransactionIsolation(level);
        }
        if (replica != null) {
            replica.setTransactionIsolation(level);
            if (!autoCommit && !replicaTransaction && replicaTransactionNeeded(replicaNode)) {
                // One snapshot for the rest of the transaction from here on.
                replica.setAutoCommit(false);
                replicaTransaction = true;
            }
        }
    }

    /** Sets the schema for the routed connection and every bound physical connection. */
    void schema(String schema) throws SQLException {
        this.schema = schema;
        if (primary != null) {
            primary.setSchema(schema);
        }
        if (replica != null) {
            replica.setSchema(schema);
        }
    }

    /** The primary for a statement routed there for {@code reason}, bound now if needed. */
    Connection usePrimary(SessionRouting unit, RouteReason reason) throws SQLException {
        if (primary == null) {
            primary = configure(primarySource.getConnection(), null);
            generation++;
        }
        metrics.statement(RoutingMetrics.PRIMARY, reason);
        unit.lastStatementOnReplica(false);
        last = primary;
        if (!settings.isEmpty()) {
            settings.carryTo(primary, true, "primary");
        }
        return primary;
    }

    /**
     * A replica for a read, bound now if needed; the primary if none can serve and the policy allows.
     *
     * @param mandatory under {@code REPLICA}: never the primary
     * @param required the WAL position the read must reflect, {@link Lsn#UNKNOWN} for none,
     *        {@link ActorStamps#PRIMARY_ONLY} while the actor has a mutation pending; raised to the unit
     *        of work's read floor after one of its reads fell back to the primary
     */
    Connection useReplica(SessionRouting unit, boolean mandatory, RouteReason reason, long required)
            throws SQLException {
        if (replica != null) {
            return replicaUsed(unit, reason);
        }
        if (required == ActorStamps.PRIMARY_ONLY) {
            return fallBack(unit, mandatory, RouteReason.PENDING_WRITE, null, null);
        }
        if (unit.replicaLost()) {
            return fallBack(unit, mandatory, RouteReason.REPLICA_DOWN, null, null);
        }
        if (!mandatory) {
            // Monotonic reads: a read of this unit of work that fell back to the primary may have seen
            // what no replica has replayed yet, so a replica must be at least that far along. REPLICA
            // never falls back, so it never has a floor.
            if (unit.readFloorStale() && replicas.anyEligible() && !takeReadFloor(unit)) {
                return fallBack(unit, false, RouteReason.LSN_FALLBACK, null, null);
            }
            required = Lsn.max(required, unit.readFloor());
        }
        final ReplicaNode.Ineligibility[] whyNot = new ReplicaNode.Ineligibility[1];
        ReplicaNode node = unit.replica();
        if (node != null) {
            final ReplicaNode.Ineligibility why = node.ineligibility(replicas.bounds(), required);
            if (why != null) {
                // The replica this unit of work read from is gone, too far behind, or short of the
                // required position; another one could be behind what was already read, so only the
                // primary keeps reads monotonic.
                unit.loseReplica();
                return fallBack(unit, mandatory, ReplicaNode.Ineligibility.fallbackReason(why), null, null);
            }
        }
        final boolean sticky = node != null;
        RouteReason servedReason = reason;
        if (node == null) {
            node = replicas.choose(required, null, whyNot);
            if (required != Lsn.UNKNOWN) {
                if (node != null) {
                    metrics.gate(GateOutcome.KNOWN, 0);
                } else if (whyNot[0] == ReplicaNode.Ineligibility.BEHIND_LSN) {
                    node = replicas.await(required, lsnWaitNanos, whyNot);
                    servedReason = RouteReason.LSN_WAIT;
                }
            }
        }
        SQLException failure = null;
        ReplicaNode failed = null;
        for (int attempt = 0; node != null && attempt <= replicas.nodes().size(); attempt++) {
            final Connection physical;
            try {
                physical = configure(node.connections().getConnection(), node);
            } catch (SQLException e) {
                replicaFailed(node, e);
                failure = e;
                failed = node;
                whyNot[0] = ReplicaNode.Ineligibility.DOWN;
                if (failurePolicy == ReplicaFailure.FAIL || mandatory || sticky) {
                    // Under FALLBACK a unit of work that already read from this replica moves to the
                    // primary, never to another replica that could be behind what it read.
                    if (sticky) {
                        unit.loseReplica();
                    }
                    break;
                }
                // Nothing ran on the failed replica yet, so another one is as good.
                node = replicas.choose(required, node, whyNot);
                continue;
            }
            replica = physical;
            replicaNode = node;
            generation++;
            unit.replica(node);
            return replicaUsed(unit, servedReason);
        }
        return fallBack(unit, mandatory, ReplicaNode.Ineligibility.fallbackReason(whyNot[0]), failure, failed);
    }

    private Connection replicaUsed(SessionRouting unit, RouteReason reason) throws SQLException {
        metrics.statement(replicaNode.metricsNode(), reason);
        unit.lastStatementOnReplica(true);
        last = replica;
        if (!settings.isEmpty() && settings.missingOn(false)) {
            // Inside a transaction a setting must end with it (SET LOCAL) or be undone by its rollback (SET).
            replicaTransactionWanted();
            settings.carryTo(replica, false, "replica " + replicaNode);
        }
        return replica;
    }

    private void replicaFailed(ReplicaNode node, SQLException e) {
        metrics.replicaFailure(node.metricsNode());
        if (node.markFailed()) {
            LOG.warn("Replica {} failed to give a connection ({}); its circuit breaker is open", node, e.getMessage());
        }
    }

    private Connection fallBack(
            SessionRouting unit, boolean mandatory, RouteReason reason, SQLException failure, ReplicaNode node)
            throws SQLException {
        if (mandatory || failurePolicy == ReplicaFailure.FAIL) {
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
        metrics.fallback(reason);
        final Connection primary = usePrimary(unit, reason);
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
    private boolean takeReadFloor(SessionRouting unit) {
        try {
            if (primary != null) {
                unit.readFloor(WalPositions.insertPosition(primary));
            } else {
                try (Connection connection = primarySource.getConnection()) {
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

    /**
     * Gives a physical connection just borrowed the routed connection's state.
     *
     * @param node the replica it comes from, {@code null} for the primary
     */
    private Connection configure(Connection physical, ReplicaNode node) throws SQLException {
        final boolean onReplica = node != null;
        try {
            if (onReplica) {
                replicaTransaction = !autoCommit && replicaTransactionNeeded(node);
            }
            if (!autoCommit && (!onReplica || replicaTransaction)) {
                physical.setAutoCommit(false);
            }
            if (isolation != null) {
                physical.setTransactionIsolation(isolation);
            }
            if (readOnly && !onReplica) {
                physical.setReadOnly(true);
            }
            if (schema != null) {
                physical.setSchema(schema);
            }
            return physical;
        } catch (SQLException | RuntimeException e) {
            physical.close();
            throw e;
        }
    }

    /**
     * Whether a transaction's reads on {@code node} need a transaction there too. A read-write
     * transaction's reads at READ COMMITTED take a new snapshot per statement anyway, so they run in
     * auto-commit on the replica: the same results, without a {@code BEGIN} and a second
     * {@code COMMIT} per transaction, and without a snapshot held open on the standby while the
     * transaction goes on (which would hold back vacuum through {@code hot_standby_feedback}, or get
     * cancelled by recovery conflicts). A read-only transaction lives wholly on the replica and keeps
     * its transaction, as do stricter isolation levels (one snapshot for the transaction) and, see
     * {@link #replicaCursorWanted}, a statement that asks for a fetch size.
     */
    boolean replicaTransactionNeeded(ReplicaNode node) {
        if (readOnly) {
            return true;
        }
        if (isolation == null) {
            return !node.readCommittedByDefault();
        }
        return isolation != Connection.TRANSACTION_READ_COMMITTED
                && isolation != Connection.TRANSACTION_READ_UNCOMMITTED;
    }

    /**
     * A statement on {@code physical} asked for a fetch size: pgjdbc streams rows through a cursor
     * only inside a transaction, so a replica connection starts one now (the driver sends its
     * {@code BEGIN} with the next statement) rather than read the whole result at once.
     */
    void replicaCursorWanted(Connection physical) throws SQLException {
        if (physical == replica) {
            replicaTransactionWanted();
        }
    }

    /** In a transaction, the replica connection starts one of its own if it runs without. */
    void replicaTransactionWanted() throws SQLException {
        if (!autoCommit && !replicaTransaction) {
            replica.setAutoCommit(false);
            replicaTransaction = true;
        }
    }

    /** A {@code SET} or {@code RESET} was prepared on {@code physical}; see {@link #replicaTransactionWanted}. */
    void settingPrepared(Connection physical) throws SQLException {
        if (physical == replica) {
            // Inside a transaction a setting must end with it (SET LOCAL) or be undone by its
            // rollback (SET), so the replica needs a transaction of its own for it.
            replicaTransactionWanted();
        }
    }

    /** Something changed that can send a statement prepared earlier elsewhere; see {@link #generation}. */
    void changed() {
        generation++;
    }

    /** A {@code SET} or {@code RESET} ran without an error on {@code physical}: carry it over from now on. */
    void settingRan(Connection physical, String sql, Classification classification) {
        generation++;
        settings.ran(
                sql,
                classification,
                physical != null && physical == primary,
                physical != null && physical == replica,
                !autoCommit);
    }

    /** The connection for metadata-like calls: whatever is bound, else the primary. */
    Connection any() throws SQLException {
        if (last != null) {
            return last;
        }
        if (primary == null) {
            primary = configure(primarySource.getConnection(), null);
            generation++;
        }
        last = primary;
        return primary;
    }

    /** Aborts every physical connection (JDBC {@code abort}). */
    void abort(java.util.concurrent.Executor executor) throws SQLException {
        generation++;
        if (replica != null) {
            replica.abort(executor);
        }
        if (primary != null) {
            primary.abort(executor);
        }
        replica = null;
        primary = null;
        last = null;
    }

    /** The bound physical connection that ran last, in words. */
    String describeLast() {
        return last == null ? "unbound" : last == primary ? "primary" : String.valueOf(replicaNode);
    }
}
