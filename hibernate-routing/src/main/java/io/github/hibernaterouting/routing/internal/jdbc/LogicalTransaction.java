package io.github.hibernaterouting.routing.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC transaction of one routed connection, over its physical connections: it begins wherever
 * its first statement goes, commits or rolls back on every physical connection that took part, and
 * has the commit's WAL position captured when it wrote. Every end returns the physical connections
 * to their pools, but for one that a transaction begun with SQL or a cursor still lives on
 * ({@link SqlControl}), which stays bound until the routed connection closes.
 *
 * <p>In a JTA persistence unit, a write inside a global transaction is captured when that
 * transaction commits ({@link JtaTransactions}), never for one that rolls back; the transaction
 * manager, not this class, commits the enlisted primary connection. Not thread-safe.
 */
final class LogicalTransaction {
    private static final Logger LOG = LoggerFactory.getLogger(LogicalTransaction.class);

    private final PhysicalConnections physicals;
    private final CommitCapture commits;
    /** The persistence unit's JTA transactions, or {@code null} for a resource-local one. */
    private final JtaTransactions jta;
    /** A write ran in the current transaction: capture the commit's WAL position after it commits. */
    private boolean wroteInTransaction;
    /** A write ran in auto-commit mode: capture the position before the primary connection is released. */
    private boolean wroteInAutoCommit;

    LogicalTransaction(PhysicalConnections physicals, CommitCapture commits, JtaTransactions jta) {
        this.physicals = physicals;
        this.commits = commits;
        this.jta = jta;
        physicals.control.commits = commits;
    }

    /** A write is about to run on the primary. */
    void wrote() {
        if (jta != null && jta.active()) {
            jta.wrote(commits::beforeGlobalCommit, this::globalTransactionEnded);
            return;
        }
        if (physicals.autoCommit && physicals.control.wroteInTransaction()) {
            // In a transaction begun with SQL: captured after its COMMIT.
            return;
        }
        if (physicals.autoCommit) {
            wroteInAutoCommit = true;
        } else {
            wroteInTransaction = true;
        }
    }

    /** A transaction begins: it starts wherever its first statement decides. */
    void begin() throws SQLException {
        physicals.autoCommit = false;
        physicals.transactionStarted = false;
        physicals.transactionIsolation = 0;
        physicals.changed();
        // A transaction begun with SQL that is open becomes this one.
        wroteInTransaction = physicals.control.jdbcTransactionBegan();
        if (physicals.replica != null) {
            if (physicals.control.holds(physicals.replica)) {
                physicals.replicaKept();
            } else {
                releaseReplica();
                physicals.last = physicals.primary;
            }
        }
        if (physicals.primary != null) {
            physicals.primary.setAutoCommit(false);
        }
    }

    /** Auto-commit is switched back on, which in JDBC commits the open transaction. */
    void autoCommitOn() throws SQLException {
        if (physicals.primary != null) {
            physicals.primary.setAutoCommit(true);
            if (wroteInTransaction) {
                wroteInTransaction = false;
                commits.committed(physicals.primary);
            }
        }
        physicals.settings.transactionEnded(true);
        physicals.control.jdbcTransactionEnded(true);
        physicals.autoCommit = true;
        release();
    }

    void commit() throws SQLException {
        boolean committed = false;
        try {
            if (physicals.primary != null) {
                physicals.primary.commit();
                if (wroteInTransaction) {
                    wroteInTransaction = false;
                    commits.committed(physicals.primary);
                }
            }
            committed = true;
            if (physicals.replica != null && physicals.replicaTransaction) {
                try {
                    physicals.replica.commit();
                } catch (SQLException e) {
                    // A read-only transaction; its reads were already returned. Nothing to undo.
                    LOG.debug(
                            "Ending the read-only transaction on {} failed: {}", physicals.replicaNode, e.getMessage());
                }
            }
        } finally {
            physicals.settings.transactionEnded(committed);
            if (!physicals.autoCommit) {
                physicals.control.jdbcTransactionEnded(committed);
            }
            release();
        }
    }

    void rollback() throws SQLException {
        physicals.settings.transactionEnded(false);
        if (!physicals.autoCommit) {
            physicals.control.jdbcTransactionEnded(false);
        }
        try {
            SQLException failure = null;
            if (physicals.primary != null) {
                try {
                    physicals.primary.rollback();
                } catch (SQLException e) {
                    failure = e;
                }
            }
            if (physicals.replica != null && physicals.replicaTransaction) {
                try {
                    physicals.replica.rollback();
                } catch (SQLException e) {
                    LOG.debug(
                            "Rolling back the read-only transaction on {} failed: {}",
                            physicals.replicaNode,
                            e.getMessage());
                }
            }
            if (failure != null) {
                throw failure;
            }
        } finally {
            release();
        }
    }

    /**
     * The global transaction this connection wrote in ended: if it committed, capture the position
     * ({@link CommitCapture#committedGlobally}), with no connection of the transaction's.
     */
    private void globalTransactionEnded(int status) {
        if (status == jakarta.transaction.Status.STATUS_COMMITTED) {
            commits.committedGlobally();
        }
    }

    /** Returns every physical connection, after capturing the position of a write made in auto-commit mode. */
    void release() throws SQLException {
        if (wroteInAutoCommit && physicals.primary != null) {
            wroteInAutoCommit = false;
            commits.committed(physicals.primary);
        }
        wroteInTransaction = false;
        physicals.savepoints.clear();
        // The next transaction starts afresh, with the connection's isolation level.
        physicals.transactionStarted = false;
        physicals.transactionIsolation = 0;
        releaseAll();
    }

    /**
     * The routed connection closes: a transaction begun with SQL is rolled back and the cursors are
     * closed, then every physical connection goes back to its pool.
     */
    void close() throws SQLException {
        physicals.control.close();
        release();
    }

    /**
     * Returns every physical connection to its pool, but for one that a transaction begun with SQL or
     * a cursor lives on, which keeps the routed connection's mode; the next statement binds anew.
     */
    private void releaseAll() throws SQLException {
        final PhysicalConnections p = physicals;
        p.generation++;
        SQLException failure = null;
        if (p.replica != null) {
            try {
                if (p.control.holds(p.replica)) {
                    p.replicaKept();
                } else {
                    releaseReplica();
                }
            } catch (SQLException e) {
                failure = e;
            }
        }
        if (p.primary != null) {
            try {
                if (p.control.holds(p.primary)) {
                    // The commit's position may have been read in auto-commit.
                    p.primary.setAutoCommit(p.autoCommit);
                } else {
                    final Connection primary = p.primary;
                    p.primary = null;
                    primary.close();
                }
            } catch (SQLException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        p.last = p.primary != null ? p.primary : p.replica;
        p.settings.physicalsReleased();
        if (failure != null) {
            throw failure;
        }
    }

    /** Returns the replica connection to its pool, read-only again if a setting ran on it; the next one needs the settings anew. */
    private void releaseReplica() throws SQLException {
        final PhysicalConnections p = physicals;
        p.generation++;
        try {
            if (!p.settings.isEmpty()) {
                restoreReadOnly();
                p.settings.replicaReleased();
            }
            p.replica.close();
        } finally {
            p.replica = null;
            p.replicaNode = null;
        }
    }

    /**
     * A session-level setting on the replica connection may have been {@code RESET ALL} or
     * {@code RESET default_transaction_read_only}: before it goes back to the pool, make it read-only
     * again, as the pool's init SQL did. If that fails the connection leaves the pool.
     */
    private void restoreReadOnly() {
        final PhysicalConnections p = physicals;
        if (!p.settings.replicaHasSessionSetting()) {
            return;
        }
        try {
            // Outside a transaction, or a rollback would undo it; the replica's transaction only read.
            p.replica.setAutoCommit(true);
            try (Statement statement = p.replica.createStatement()) {
                // And the lexer's assumption back, which only a unit under strategy REPLICA can have changed here.
                statement.execute(JdbcRouting.READ_ONLY_SESSION + "; SET standard_conforming_strings = on");
            }
        } catch (SQLException e) {
            LOG.debug(
                    "Could not make a connection to {} read-only again ({}); evicting it",
                    p.replicaNode,
                    e.getMessage());
            p.replicaNode.evict(p.replica);
        }
    }
}
