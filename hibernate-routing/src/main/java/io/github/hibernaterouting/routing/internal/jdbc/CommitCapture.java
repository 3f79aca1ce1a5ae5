package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.internal.consistency.ReadYourWritesTracker;
import io.github.hibernaterouting.routing.internal.replicas.ServerProbe;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * After a write committed on the primary: reads the WAL position that covers it, on the connection
 * that committed it (which also raises the actor's table stamp, in the same statement), and records
 * it for read-your-writes. Thread-safe.
 */
final class CommitCapture {
    private static final Logger LOG = LoggerFactory.getLogger(CommitCapture.class);

    private final ReadYourWritesTracker tracker;
    private final DataSource primary;
    private final ServerProbe primaryProbe;

    CommitCapture(ReadYourWritesTracker tracker, DataSource primary, ServerProbe primaryProbe) {
        this.tracker = tracker;
        this.primary = primary;
        this.primaryProbe = primaryProbe;
    }

    /**
     * Records the position of the write just committed on {@code primary}. Never throws: the write is
     * committed, and reporting a failure now would make the caller believe it was not. Without the
     * position, the actor is kept on the primary instead.
     */
    void committed(Connection primary) {
        if (!tracker.wantsCommitPosition()) {
            // Nothing would consume the position (no scope to record it in, no actor to stamp): skip the round trip.
            return;
        }
        try {
            // Auto-commit first, so that the query does not open a transaction the pool must roll back.
            primary.setAutoCommit(true);
            tracker.committed(primary);
        } catch (SQLException e) {
            LOG.warn(
                    "Could not read the WAL position after a commit ({}); this actor's reads use the primary for a while",
                    e.getMessage());
            tracker.commitPositionUnknown();
        }
    }

    /**
     * Inside a global (JTA) transaction that wrote, before it commits: raises the actor's stamp in the
     * actors' table, on the transaction's own connection (the data source hands out the enlisted one),
     * so that the stamp commits with the write and a rollback undoes it. The position it can know
     * then is just before the commit's own record; {@link #committedGlobally} raises it past that.
     * Never throws: a failure here must not fail the commit.
     */
    void beforeGlobalCommit() {
        if (!tracker.stampsInTable()) {
            return;
        }
        try (Connection enlisted = primary.getConnection()) {
            tracker.stampInTransaction(enlisted);
        } catch (SQLException | RuntimeException e) {
            LOG.warn("Could not raise the actor's stamp inside the JTA transaction ({})", e.getMessage());
        }
    }

    /**
     * Records the position of a global (JTA) transaction that committed, from its
     * {@code afterCompletion}, on the library's own connection to the primary: after completion a
     * transaction manager or a pool may refuse to hand out a connection, and the one the transaction
     * used may be gone. That connection is outside every transaction, so the position read there is
     * past the commit, and the actor's stamp in the table is raised to it there too. If the library
     * holds no such connection right now (its health check is reconnecting), the actor is kept on the
     * primary instead. Never throws.
     */
    void committedGlobally() {
        if (!tracker.wantsCommitPosition()) {
            return;
        }
        try {
            final Boolean recorded = primaryProbe.queryIfConnected(statement -> {
                tracker.committed(statement.getConnection());
                return Boolean.TRUE;
            });
            if (recorded == null) {
                LOG.warn("No connection of its own to the primary after a JTA commit; this actor's reads use the"
                        + " primary for a while");
                tracker.commitPositionUnknown();
            }
        } catch (SQLException e) {
            LOG.warn(
                    "Could not read the WAL position after a JTA commit ({}); this actor's reads use the primary for a while",
                    e.getMessage());
            tracker.commitPositionUnknown();
        }
    }
}
