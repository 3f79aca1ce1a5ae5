package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import io.github.hibernaterouting.routing.internal.session.Route;
import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import io.github.hibernaterouting.routing.internal.session.StatelessUnitReads;
import io.github.hibernaterouting.routing.internal.session.StatementRouter;
import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.Classification.Control;
import io.github.hibernaterouting.routing.sql.Classification.SettingScope;
import io.github.hibernaterouting.routing.sql.Reason;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Routes the statements of one routed connection for its unit of work: classifies each, asks
 * {@link StatementRouter} where it goes, applies the write policy before a write, and binds the
 * physical connection. Holds the connection's binding to its session's routing state.
 *
 * <p>Before the classifier's verdict, what earlier SQL left on a physical connection decides: a
 * cursor's statements run where it was declared, and every statement of a transaction begun with SQL
 * where that transaction runs ({@link SqlControl}). Not thread-safe, like the connection.
 */
final class UnitOfWorkRouter {
    private final JdbcRouting routing;
    private final PhysicalConnections physicals;
    private final LogicalTransaction transaction;
    private final boolean primaryTenant;
    private SessionRouting unit;
    /** The session property was read since the last statement: a transaction begun now need not read it again. */
    private boolean strategyFresh;
    /**
     * The SQL of the statement {@link #route} just routed if the connection must see it run (a setting,
     * a transaction or cursor statement: {@link SqlControl#watched}), for {@link #prepared}; else null.
     */
    private String routedSetting;

    private Classification routedSettingClassification;
    /** Statements on a replica not closed yet: rows being read may come from there (caches must not keep them). */
    private int openReplicaStatements;

    UnitOfWorkRouter(
            JdbcRouting routing, PhysicalConnections physicals, LogicalTransaction transaction, boolean primaryTenant) {
        this.routing = routing;
        this.physicals = physicals;
        this.transaction = transaction;
        this.primaryTenant = primaryTenant;
    }

    /** Binds the connection to its session's routing state. */
    void attach(SessionRouting sessionRouting) {
        unit = sessionRouting;
        unit.primaryTenant(primaryTenant);
        unit.refreshSessionStrategy();
        strategyFresh = true;
    }

    /** The session's routing state, or {@code null} if the connection was not acquired through a session. */
    SessionRouting sessionRouting() {
        return unit;
    }

    /** A transaction began: the session property may have changed since the last statement. */
    void transactionBegun() {
        if (!strategyFresh) {
            unit().refreshSessionStrategy();
            strategyFresh = true;
        }
    }

    private SessionRouting unit() {
        if (unit == null) {
            // Not acquired through a Hibernate session (or the event monitor is not ours): route with
            // state of our own; escalation then lasts as long as this connection.
            unit = routing.newSessionRouting(null);
            unit.primaryTenant(primaryTenant);
        }
        return unit;
    }

    /** The physical connection that must run {@code sql}. */
    Connection route(String sql) throws SQLException {
        final Connection target = decide(sql);
        final StatelessUnitReads stateless = unit.statelessReads();
        if (stateless != null && target != null) {
            if (target == physicals.replica) {
                stateless.ranOnReplica(sql);
            } else if (routing.classifier().classify(sql).reason() == Reason.READ_ONLY) {
                stateless.queriedPrimary(sql);
            }
        }
        return target;
    }

    private Connection decide(String sql) throws SQLException {
        final SessionRouting unit = unit();
        strategyFresh = false;
        final Classification classification = routing.classifier().classify(sql);
        if (SqlControl.watched(classification)) {
            routedSetting = sql;
            routedSettingClassification = classification;
        } else {
            routedSetting = null;
        }
        final boolean inTransaction = !physicals.autoCommit;
        if (classification.settingScope() != SettingScope.NONE
                || classification.reason() == Reason.PRIMARY_ONLY_TRANSACTION) {
            isolationSetting(sql, inTransaction);
        }
        if (classification.settingScope() != SettingScope.NONE) {
            unit.sessionStateChanged(classification);
        }
        final Strategy strategy = unit.strategy(classification.routingHint());
        if (!classification.replicaSafe() && strategy != Strategy.REPLICA) {
            // Before it runs, so that no later read of the unit misses a temporary object it creates.
            unit.aboutToWrite(classification);
        }
        final Connection held = held(unit, strategy, classification);
        if (held != null) {
            if (inTransaction) {
                physicals.transactionStarted = true;
            }
            return held;
        }
        // Above READ COMMITTED a read-write transaction keeps one snapshot only on one server, the one
        // that runs its writes; a standby refuses SERIALIZABLE altogether.
        final int isolation = physicals.effectiveIsolation();
        final boolean serializable = isolation == Connection.TRANSACTION_SERIALIZABLE;
        // A global (JTA) transaction is one too, though its connections come in auto-commit mode.
        final boolean anyTransaction = inTransaction || physicals.jta != null && physicals.jta.active();
        final Route route = StatementRouter.route(
                classification,
                strategy,
                unit,
                anyTransaction && physicals.primary != null,
                // A stateless session keeps no loaded state to check a write against: read where it writes.
                anyTransaction && !physicals.readOnly && (routing.transactionsOnPrimary() || unit.stateless()),
                serializable || anyTransaction && !physicals.readOnly && IsolationLevel.aboveReadCommitted(isolation));
        if (inTransaction) {
            physicals.transactionStarted = true;
        }
        return switch (route) {
            case WRITE -> {
                routing.writes().beforeWrite(unit, strategy, classification);
                yield wrote(unit, RouteReason.WRITE);
            }
            case TRANSACTION, STRATEGY, FORCED, ESCALATED, ISOLATION, VERIFY, SESSION_STATE ->
                physicals.usePrimary(unit, route.reason());
            // No position of their own, but a client's floor (a consistency token) holds under every strategy.
            case REPLICA_ONLY -> {
                if (unit.temporaryObjects()) {
                    throw new SQLException(
                            "This unit of work created a temporary table, view or sequence on the primary (or ran SQL"
                                    + " that may have: a DO block, CALL, a plain JDBC Statement), which no replica has: there"
                                    + " the read would fail, or read a permanent table of the same name instead. Strategy"
                                    + " REPLICA never uses the primary, so the read is refused. Read under"
                                    + " Strategy.READ_AFTER_WRITE, STALE_READ or PRIMARY in this unit of work, or create the"
                                    + " temporary object in another unit of work",
                            "0A000");
                }
                if (serializable) {
                    throw new SQLException(
                            "A hot standby cannot run a SERIALIZABLE transaction, and strategy REPLICA never uses"
                                    + " the primary. Run this work at REPEATABLE READ (a read-only transaction keeps"
                                    + " one snapshot on the replica), or under Strategy.READ_AFTER_WRITE",
                            "0A000");
                }
                yield physicals.useReplica(
                        unit,
                        true,
                        route.reason(),
                        physicals.replica != null
                                ? Lsn.UNKNOWN
                                : routing.tracker().floorPosition(physicals.primary));
            }
            case STALE_READ, STALE_READ_AFTER_WRITE ->
                physicals.useReplica(
                        unit,
                        false,
                        route.reason(),
                        physicals.replica != null
                                ? Lsn.UNKNOWN
                                : routing.tracker().floorPosition(physicals.primary));
            case FRESH_READ ->
                physicals.useReplica(
                        unit,
                        false,
                        route.reason(),
                        physicals.replica != null
                                ? Lsn.UNKNOWN
                                : routing.tracker().requiredPosition(physicals.primary));
        };
    }

    /**
     * The physical connection {@code statement} must run on because of what earlier SQL left there,
     * or {@code null} to route it as usual:
     * <ul>
     * <li>a statement on a cursor ({@code FETCH}, {@code MOVE}, {@code CLOSE}, and a {@code DECLARE}
     * of a name in use, which the server refuses) runs where that cursor was declared;</li>
     * <li>inside a transaction begun with SQL, every statement runs where it runs;</li>
     * <li>a statement on a cursor this connection does not know (one a function opened, say) runs on
     * the primary, where such functions run;</li>
     * <li>a read-write {@code BEGIN} in auto-commit mode begins its transaction on the primary. Inside a
     * JDBC transaction, where PostgreSQL only warns about a {@code BEGIN}, a {@code BEGIN} or a
     * savepoint keeps the rest of a read-write transaction on the primary, as one transaction there.
     * Under {@code REPLICA}, and for read-only ones, they go where a read goes: {@link #prepared}
     * starts a transaction on the replica for them.</li>
     * </ul>
     */
    private Connection held(SessionRouting unit, Strategy strategy, Classification statement) throws SQLException {
        final SqlControl control = physicals.control;
        final Control kind = statement.control();
        final boolean onCursor = kind == Control.CURSOR_USE || kind == Control.CURSOR_CLOSE;
        if (onCursor || kind == Control.CURSOR_OPEN) {
            final Connection cursor = kind == Control.CURSOR_CLOSE && statement.cursorName() == null
                    ? control.anyCursor()
                    : control.cursor(statement.cursorName());
            if (cursor != null) {
                return runOn(cursor, unit, strategy, statement);
            }
        }
        if (control.transaction() != null) {
            final Connection pinned = runOn(control.transaction(), unit, strategy, statement);
            if (pinned != null) {
                return pinned;
            }
        }
        if (strategy == Strategy.REPLICA) {
            return null;
        }
        if (onCursor) {
            return physicals.usePrimary(unit, RouteReason.TRANSACTION);
        }
        final boolean begin = kind == Control.BEGIN || kind == Control.BEGIN_READ_ONLY;
        if (physicals.autoCommit
                ? kind == Control.BEGIN
                : (begin || kind == Control.SAVEPOINT) && !physicals.readOnly) {
            return physicals.usePrimary(unit, RouteReason.TRANSACTION);
        }
        return null;
    }

    /**
     * {@code physical}, a bound connection that holds a transaction or cursor, for {@code statement}:
     * a write there goes through the write policy on the primary; on a replica it runs in that
     * connection's read-only transaction and the server refuses it (under {@code REPLICA} the policy
     * refuses it first). {@code null} if {@code physical} is no longer bound.
     */
    private Connection runOn(Connection physical, SessionRouting unit, Strategy strategy, Classification statement)
            throws SQLException {
        if (physical == physicals.primary) {
            if (!statement.replicaSafe()) {
                routing.writes().beforeWrite(unit, strategy, statement);
                return wrote(unit, RouteReason.WRITE);
            }
            return physicals.usePrimary(unit, RouteReason.TRANSACTION);
        }
        if (physical == physicals.replica) {
            if (!statement.replicaSafe() && strategy == Strategy.REPLICA) {
                routing.writes().beforeWrite(unit, strategy, statement);
            }
            return physicals.useReplica(unit, false, RouteReason.TRANSACTION, Lsn.UNKNOWN);
        }
        return null;
    }

    /**
     * A {@code SET} or {@code RESET} that changes the isolation level: known before it runs, so that
     * it and the transaction it starts go where that level needs.
     *
     * @throws SQLException for {@code SET TRANSACTION ISOLATION LEVEL} after the transaction ran a
     *         statement anywhere, as PostgreSQL refuses it on one connection
     */
    private void isolationSetting(String sql, boolean inTransaction) throws SQLException {
        final int change = IsolationStatements.of(sql);
        if (change == IsolationStatements.NONE) {
            return;
        }
        if ((change & IsolationStatements.TRANSACTION) != 0) {
            if (!inTransaction) {
                return; // outside a transaction block PostgreSQL only warns
            }
            if (physicals.transactionStarted) {
                throw new SQLException("SET TRANSACTION ISOLATION LEVEL must be called before any query", "25001");
            }
            physicals.transactionIsolation = IsolationStatements.level(change);
        } else {
            physicals.isolation = change == IsolationStatements.RESET ? null : IsolationStatements.level(change);
        }
        physicals.changed();
    }

    /** After the write policy let a write through: the primary, and remember to capture the commit. */
    private Connection wrote(SessionRouting unit, RouteReason reason) throws SQLException {
        transaction.wrote();
        // The unit of work escalated: its statements prepared on a replica may have to follow it.
        physicals.changed();
        return physicals.usePrimary(unit, reason);
    }

    /**
     * Raw JDBC whose SQL is not known up front goes to the primary and counts as a write; inside a
     * read-only transaction begun with SQL on a replica, to that replica, which refuses writes.
     */
    Connection rawJdbc(String what) throws SQLException {
        final SessionRouting unit = unit();
        if (!physicals.autoCommit) {
            physicals.transactionStarted = true;
        }
        final Connection pinned = physicals.control.transaction();
        if (pinned != null && pinned == physicals.replica && unit.strategy(null) != Strategy.REPLICA) {
            return physicals.useReplica(unit, false, RouteReason.TRANSACTION, Lsn.UNKNOWN);
        }
        routing.writes()
                .beforeWrite(
                        unit,
                        unit.strategy(null),
                        RouteReason.RAW_JDBC,
                        "use " + what + ", whose SQL cannot be checked before it runs");
        unit.aboutToRunUnknownSql();
        return wrote(unit, RouteReason.RAW_JDBC);
    }

    /**
     * {@code statement} as prepared on {@code target}: watched ({@link RoutedStatement}) if it was
     * prepared on a replica, which it may have to leave when the unit of work moves, or if it is a
     * setting; a statement prepared on the primary for any other reason is returned as it is.
     *
     * @param sql and the arguments after it: what {@code prepareStatement} was called with
     */
    PreparedStatement prepared(
            RoutingConnection routed,
            Connection target,
            PreparedStatement statement,
            String sql,
            int resultSetType,
            int resultSetConcurrency,
            int resultSetHoldability,
            int autoGeneratedKeys,
            Object columns)
            throws SQLException {
        final String setting = routedSetting;
        routedSetting = null;
        if (setting == null && target != physicals.replica) {
            return statement;
        }
        if (setting != null && SqlControl.needsTransaction(routedSettingClassification)) {
            physicals.settingPrepared(target);
        }
        final RoutedStatement routedStatement = new RoutedStatement(
                statement,
                routed,
                routed,
                physicals,
                target,
                sql,
                resultSetType,
                resultSetConcurrency,
                resultSetHoldability,
                autoGeneratedKeys,
                columns,
                setting,
                setting != null ? routedSettingClassification : null);
        if (target == physicals.replica) {
            replicaStatementOpened(routedStatement);
        }
        return routedStatement;
    }

    /** A statement now runs on a replica: until it is closed, rows being read may come from there. */
    void replicaStatementOpened(RoutedStatement statement) {
        openReplicaStatements++;
        statement.countedAsReplicaRead(this);
    }

    /** A statement counted by {@link #replicaStatementOpened} was closed or moved off the replica. */
    void replicaStatementClosed() {
        if (openReplicaStatements > 0) {
            openReplicaStatements--;
        }
    }

    /** The routed connection was closed: its statements are gone with it. */
    void released() {
        openReplicaStatements = 0;
    }

    /** See {@link SessionRouting.Routed#mayBeReadingReplicaData()}. */
    boolean mayBeReadingReplicaData() {
        return openReplicaStatements > 0 || unit != null && unit.lastStatementOnReplica();
    }
}
