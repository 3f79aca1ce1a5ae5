package io.github.hibernaterouting.routing.internal.jdbc;

import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC transaction of one routed connection, over its physical connections: it begins wherever
 * its first statement goes, commits or rolls back on every physical connection that took part, and
 * has the commit's WAL position captured when it wrote. Every end returns the physical connections
 * to their pools. Not thread-safe.
 */
final class LogicalTransaction {
    private static final Logger LOG = LoggerFactory.getLogger(LogicalTransaction.class);

    private final PhysicalConnections physicals;
    private final CommitCapture commits;
    /** A write ran in the current transaction: capture the commit's WAL position after it commits. */
    private boolean wroteInTransaction;
    /** A write ran in auto-commit mode: capture the position before the primary connection is released. */
    private boolean wroteInAutoCommit;

    LogicalTransaction(PhysicalConnections physicals, CommitCapture commits) {
        this.physicals = physicals;
        this.commits = commits;
    }

    /** A write is about to run on the primary. */
    void wrote() {
        if (physicals.autoCommit) {
            wroteInAutoCommit = true;
        } else {
            wroteInTransaction = true;
        }
    }

    /** A transaction begins: it starts wherever its first statement decides. */
    void begin() throws SQLException {
        physicals.autoCommit = false;
        if (physicals.replica != null) {
            physicals.releaseReplica();
            physicals.last = physicals.primary;
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
            release();
        }
    }

    void rollback() throws SQLException {
        physicals.settings.transactionEnded(false);
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

    /** Returns every physical connection, after capturing the position of a write made in auto-commit mode. */
    void release() throws SQLException {
        if (wroteInAutoCommit && physicals.primary != null) {
            wroteInAutoCommit = false;
            commits.committed(physicals.primary);
        }
        wroteInTransaction = false;
        physicals.releaseAll();
    }
}
