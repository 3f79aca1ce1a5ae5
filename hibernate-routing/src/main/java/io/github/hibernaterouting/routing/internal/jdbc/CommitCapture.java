package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.internal.consistency.ReadYourWritesTracker;
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

    CommitCapture(ReadYourWritesTracker tracker, DataSource primary) {
        this.tracker = tracker;
        this.primary = primary;
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
     * Records the position of a global (JTA) transaction that committed, from its
     * {@code afterCompletion}: on {@code bound}, the primary connection the routed connection still
     * holds, or on a connection borrowed now when Hibernate already gave that one back. Never throws.
     */
    void committedGlobally(Connection bound) {
        if (!tracker.wantsCommitPosition()) {
            return;
        }
        try {
            if (bound != null && !bound.isClosed()) {
                tracker.committed(bound);
                return;
            }
            try (Connection connection = primary.getConnection()) {
                tracker.committed(connection);
            }
        } catch (SQLException e) {
            LOG.warn(
                    "Could not read the WAL position after a JTA commit ({}); this actor's reads use the primary for a while",
                    e.getMessage());
            tracker.commitPositionUnknown();
        }
    }
}
