package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import io.github.hibernaterouting.routing.internal.session.Route;
import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import io.github.hibernaterouting.routing.internal.session.StatementRouter;
import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.Classification.SettingScope;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Routes the statements of one routed connection for its unit of work: classifies each, asks
 * {@link StatementRouter} where it goes, applies the write policy before a write, and binds the
 * physical connection. Holds the connection's binding to its session's routing state. Not
 * thread-safe, like the connection.
 */
final class UnitOfWorkRouter {
    private final JdbcRouting routing;
    private final PhysicalConnections physicals;
    private final LogicalTransaction transaction;
    private final boolean primaryTenant;
    private SessionRouting unit;
    /** The session property was read since the last statement: a transaction begun now need not read it again. */
    private boolean strategyFresh;
    /** The SQL of the statement {@link #route} just routed if it is a setting, for {@link #prepared} to watch; else null. */
    private String routedSetting;

    private Classification routedSettingClassification;
    /** Statements prepared on a replica and not closed yet: rows being read may come from there. */
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
        final SessionRouting unit = unit();
        strategyFresh = false;
        final Classification classification = routing.classifier().classify(sql);
        if (classification.settingScope() != SettingScope.NONE) {
            routedSetting = sql;
            routedSettingClassification = classification;
        } else {
            routedSetting = null;
        }
        final Strategy strategy = unit.strategy(classification.routingHint());
        final boolean inTransaction = !physicals.autoCommit;
        final Route route = StatementRouter.route(
                classification,
                strategy,
                unit,
                inTransaction && physicals.primary != null,
                inTransaction && !physicals.readOnly && routing.transactionsOnPrimary());
        return switch (route) {
            case WRITE -> {
                routing.writes().beforeWrite(unit, strategy, classification);
                yield wrote(unit, RouteReason.WRITE);
            }
            case TRANSACTION, STRATEGY, FORCED, ESCALATED, VERIFY -> physicals.usePrimary(unit, route.reason());
            // No position of their own, but a client's floor (a consistency token) holds under every strategy.
            case REPLICA_ONLY ->
                physicals.useReplica(
                        unit,
                        true,
                        route.reason(),
                        physicals.replica != null
                                ? Lsn.UNKNOWN
                                : routing.tracker().floorPosition());
            case STALE_READ, STALE_READ_AFTER_WRITE ->
                physicals.useReplica(
                        unit,
                        false,
                        route.reason(),
                        physicals.replica != null
                                ? Lsn.UNKNOWN
                                : routing.tracker().floorPosition());
            case FRESH_READ ->
                physicals.useReplica(
                        unit,
                        false,
                        route.reason(),
                        physicals.replica != null
                                ? Lsn.UNKNOWN
                                : routing.tracker().requiredPosition());
        };
    }

    /** After the write policy let a write through: the primary, and remember to capture the commit. */
    private Connection wrote(SessionRouting unit, RouteReason reason) throws SQLException {
        transaction.wrote();
        return physicals.usePrimary(unit, reason);
    }

    /** Raw JDBC whose SQL is not known up front goes to the primary and counts as a write. */
    Connection rawJdbc(String what) throws SQLException {
        final SessionRouting unit = unit();
        routing.writes()
                .beforeWrite(
                        unit,
                        unit.strategy(null),
                        RouteReason.RAW_JDBC,
                        "use " + what + ", whose SQL cannot be checked before it runs");
        return wrote(unit, RouteReason.RAW_JDBC);
    }

    /**
     * {@code statement} as prepared on {@code target}, watched if it is a setting, if a fetch size
     * could need a cursor, or if it runs on a replica (until it is closed, see {@link #mayBeReadingReplicaData}).
     */
    PreparedStatement prepared(Connection routed, Connection target, PreparedStatement statement) throws SQLException {
        final boolean onReplica = target == physicals.replica;
        final String setting = routedSetting;
        final boolean watchFetchSize = physicals.cursorMayNeedTransaction(target);
        if (setting != null) {
            routedSetting = null;
            if (onReplica) {
                // Inside a transaction a setting must end with it (SET LOCAL) or be undone by its
                // rollback (SET), so the replica needs a transaction of its own for it.
                physicals.replicaTransactionWanted();
            }
        } else if (!watchFetchSize && !onReplica) {
            return statement;
        }
        if (onReplica) {
            openReplicaStatements++;
        }
        return new RoutedStatement(
                statement,
                routed,
                physicals,
                target,
                setting,
                setting != null ? routedSettingClassification : null,
                watchFetchSize || setting != null,
                onReplica ? this : null);
    }

    /** A statement prepared on a replica was closed. */
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
