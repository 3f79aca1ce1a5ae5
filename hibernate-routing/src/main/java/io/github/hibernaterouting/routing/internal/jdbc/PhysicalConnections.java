package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.ReplicaSettings.ReplicaFailure;
import io.github.hibernaterouting.routing.internal.consistency.ActorStamps;
import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.BackendServer;
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
    final DataSource primarySource;
    final ReplicaSet replicas;
    final ReplicaFailure failurePolicy;
    final long lsnWaitNanos;
    final RoutingMetrics metrics;
    /** The persistence unit's JTA transactions, or {@code null} for a resource-local one. */
    final JtaTransactions jta;

    final CarriedSettings settings = new CarriedSettings();
    /** Transactions begun and cursors declared with SQL, which keep their statements on one connection. */
    final SqlControl control = new SqlControl(this);

    final Savepoints savepoints = new Savepoints();

    boolean autoCommit = true;
    boolean readOnly;
    /**
     * The isolation level set on the routed connection, by {@code setTransactionIsolation} or a
     * session-level {@code SET} ({@code SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL …},
     * {@code SET default_transaction_isolation}); null for the default ({@link #defaultIsolation}).
     */
    Integer isolation;
    /** The isolation level {@code SET TRANSACTION ISOLATION LEVEL …} gave the current transaction; 0 if none. */
    int transactionIsolation;
    /** A statement of the current transaction was routed: its isolation level can no longer change. */
    boolean transactionStarted;
    /** {@code hibernate.connection.isolation}, applied to the pools; {@link IsolationLevel#UNKNOWN} if not set. */
    int configuredIsolation = IsolationLevel.UNKNOWN;

    String schema;

    Connection primary;
    Connection replica;
    ReplicaNode replicaNode;
    /** The server behind {@link #replicaNode} that {@link #replica} reached; meaningful only while it is bound. */
    BackendServer replicaServer;
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
            RoutingMetrics metrics,
            JtaTransactions jta) {
        this.primarySource = primarySource;
        this.replicas = replicas;
        this.failurePolicy = failurePolicy;
        this.lsnWaitNanos = lsnWaitNanos;
        this.metrics = metrics;
        this.jta = jta;
    }

    /** Sets read-only mode for the routed connection, and on the bound primary (a replica connection is read-only anyway). */
    void readOnly(boolean readOnly) throws SQLException {
        this.readOnly = readOnly;
        generation++;
        if (primary != null && !enlisted()) {
            primary.setReadOnly(readOnly);
        }
    }

    /**
     * Whether a primary connection borrowed now is enlisted in a global transaction, whose read-only state a JTA
     * pool refuses to change (Agroal: "Attempted to modify read-only state while enlisted in transaction").
     */
    private boolean enlisted() {
        return jta != null && jta.active();
    }

    /**
     * Sets the isolation level for the routed connection and every bound physical connection, as
     * {@code setTransactionIsolation} does; a replica never gets SERIALIZABLE, which a standby refuses
     * (the unit of work's reads then go to the primary).
     *
     * @throws SQLException in a transaction that already ran a statement, anywhere: as on one
     *         connection, its isolation level can no longer change
     */
    void isolation(int level) throws SQLException {
        if (!autoCommit && transactionStarted) {
            throw new SQLException(
                    "Cannot change transaction isolation level in the middle of a transaction.", "25001");
        }
        isolation = level;
        generation++;
        if (primary != null) {
            primary.setTransactionIsolation(level);
        }
        if (replica != null && level != Connection.TRANSACTION_SERIALIZABLE) {
            replica.setTransactionIsolation(level);
        }
    }

    /**
     * The isolation level the unit of work's transactions get when nothing on the connection asks
     * for one: {@code hibernate.connection.isolation}, else the primary's default as the health check
     * read it; REPEATABLE READ while neither is known, which keeps read-write transactions on the
     * primary rather than risk two snapshots.
     */
    int defaultIsolation() {
        if (configuredIsolation != IsolationLevel.UNKNOWN) {
            return configuredIsolation;
        }
        final int primaryDefault = replicas == null ? IsolationLevel.UNKNOWN : replicas.primaryDefaultIsolation();
        return primaryDefault != IsolationLevel.UNKNOWN ? primaryDefault : Connection.TRANSACTION_REPEATABLE_READ;
    }

    /** The isolation level of the current transaction, or of the next one outside a transaction. */
    int effectiveIsolation() {
        if (transactionIsolation != 0) {
            return transactionIsolation;
        }
        return isolation != null ? isolation : defaultIsolation();
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
            if (!autoCommit) {
                savepoints.reachedPrimary(primary);
            }
        }
        metrics.statement(RoutingMetrics.PRIMARY, reason);
        unit.lastStatementOnReplica(false);
        if (reason != RouteReason.WRITE && reason != RouteReason.RAW_JDBC && reason != RouteReason.VERIFY) {
            // Monotonic reads, whatever sent this read here: the unit's next replica read must see at
            // least what it may show (the primary's position is taken then, after it ran). The
            // lost-update check shows the application nothing: it only compares the state the unit
            // read with the primary's, and refuses the write when they differ.
            unit.readOnPrimary();
        }
        last = primary;
        if (!settings.isEmpty()) {
            settings.carryTo(primary, true, "primary");
        }
        return primary;
    }

    /**
     * A replica for a read, bound now if needed; the primary if none can serve and the policy allows
     * ({@link ReplicaChoice}).
     *
     * @param mandatory under {@code REPLICA}: never the primary
     * @param required the WAL position the read must reflect, {@link Lsn#UNKNOWN} for none,
     *        {@link ActorStamps#PRIMARY_ONLY} while the actor's stamp cannot be known; raised to the unit
     *        of work's read floor after one of its reads fell back to the primary
     */
    Connection useReplica(SessionRouting unit, boolean mandatory, RouteReason reason, long required)
            throws SQLException {
        return ReplicaChoice.use(this, unit, mandatory, reason, required);
    }

    /**
     * Binds {@code physical}, just borrowed from {@code node} and configured, as the replica connection.
     *
     * @param server the server behind {@code node} that {@code physical} reached
     */
    void replicaBound(Connection physical, ReplicaNode node, BackendServer server) {
        replica = physical;
        replicaNode = node;
        replicaServer = server;
        generation++;
    }

    /**
     * Gives a physical connection just borrowed the routed connection's state.
     *
     * @param node the replica it comes from, {@code null} for the primary
     */
    Connection configure(Connection physical, ReplicaNode node) throws SQLException {
        final boolean onReplica = node != null;
        try {
            if (onReplica && jta != null && !physical.getAutoCommit() && jta.active()) {
                // Either a pool whose connections start outside auto-commit, or one that enlisted this
                // connection in the global transaction; only the second refuses auto-commit now.
                try {
                    physical.setAutoCommit(true);
                } catch (SQLException e) {
                    throw JtaTransactions.replicaEnlisted(node.name());
                }
            }
            if (onReplica) {
                replicaTransaction = !autoCommit && replicaTransactionNeeded();
            }
            if (!autoCommit && (!onReplica || replicaTransaction)) {
                physical.setAutoCommit(false);
            }
            if (isolation != null) {
                if (!onReplica || isolation != Connection.TRANSACTION_SERIALIZABLE) {
                    physical.setTransactionIsolation(isolation);
                }
            } else if (onReplica) {
                // A read-only transaction at REPEATABLE READ by default keeps that level on a replica
                // whose own default (another user, other URL options) differs.
                final int wanted = defaultIsolation();
                if (wanted == Connection.TRANSACTION_REPEATABLE_READ && node.defaultIsolation() != wanted) {
                    physical.setTransactionIsolation(wanted);
                }
            }
            if (onReplica ? !physical.isReadOnly() : readOnly && !enlisted()) {
                // A replica connection from a data source the application supplies is made read-only
                // here, as the library's own replica pools make theirs (defence in depth).
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
     * Whether a transaction's reads on a replica need a transaction there too. A read-write
     * transaction's reads at READ COMMITTED take a new snapshot per statement anyway, so they run in
     * auto-commit on the replica: the same results, without a {@code BEGIN} and a second
     * {@code COMMIT} per transaction, and without a snapshot held open on the standby while the
     * transaction goes on (which would hold back vacuum through {@code hot_standby_feedback}, or get
     * cancelled by recovery conflicts). A read-only transaction lives wholly on the replica and keeps
     * its transaction, as does one above READ COMMITTED that reaches a replica at all (under
     * {@code REPLICA}, which never writes; a read-write one runs on the primary) and, see
     * {@link #replicaCursorWanted}, a statement that asks for a fetch size.
     */
    boolean replicaTransactionNeeded() {
        return readOnly || IsolationLevel.aboveReadCommitted(effectiveIsolation());
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
                !autoCommit || control.transaction() != null);
    }

    /**
     * The replica connection stays bound across a transaction's begin or end, because a transaction
     * begun with SQL or a cursor lives on it: it gets the mode the next statements need there, as
     * {@link #configure} gives a connection just borrowed.
     */
    void replicaKept() throws SQLException {
        replicaTransaction = !autoCommit && (control.transaction() == replica || replicaTransactionNeeded());
        replica.setAutoCommit(!replicaTransaction);
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
