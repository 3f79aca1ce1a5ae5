package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.internal.consistency.ReadYourWritesTracker;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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

    /**
     * How long a JTA commit waits for its position: the connection borrowed for it, the query. Past
     * it the actor is kept on the primary.
     */
    static final int GLOBAL_POSITION_TIMEOUT_SECONDS = 5;

    private static final int POSITION_READERS = 4;

    private final ReadYourWritesTracker tracker;
    private final DataSource primary;
    private final ThreadPoolExecutor positionReaders = positionReaders();

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
     * {@code afterCompletion}: on a connection borrowed from the primary data source by a thread of the
     * library's, outside every transaction (on the committing thread a transaction manager or a pool
     * may refuse to hand one out, or enlist it in the ended transaction), so that the position read
     * there is past the commit; the actor's stamp in the table is raised to it there too. Writers do
     * not take turns on one connection (never the health check's), and none waits longer than
     * {@link #GLOBAL_POSITION_TIMEOUT_SECONDS}: past that, or if every reader is busy, the actor is
     * kept on the primary instead. Never throws.
     */
    void committedGlobally() {
        if (!tracker.wantsCommitPosition()) {
            return;
        }
        final String actor = tracker.committingActor();
        Future<Long> position = null;
        try {
            position = positionReaders.submit(() -> {
                try (Connection connection = primary.getConnection()) {
                    if (!connection.getAutoCommit()) {
                        connection.setAutoCommit(true);
                    }
                    return tracker.commitPosition(connection, actor);
                }
            });
            tracker.committedAt(position.get(GLOBAL_POSITION_TIMEOUT_SECONDS, TimeUnit.SECONDS));
        } catch (ExecutionException e) {
            unknownAfterGlobalCommit(
                    e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
        } catch (TimeoutException e) {
            position.cancel(true);
            unknownAfterGlobalCommit("no answer within " + GLOBAL_POSITION_TIMEOUT_SECONDS + " seconds");
        } catch (RejectedExecutionException e) {
            unknownAfterGlobalCommit("every position reader is busy");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            position.cancel(true);
            unknownAfterGlobalCommit("interrupted");
        }
    }

    private void unknownAfterGlobalCommit(String reason) {
        LOG.warn(
                "Could not read the WAL position after a JTA commit ({}); this actor's reads use the primary for a while",
                reason);
        tracker.commitPositionUnknown();
    }

    /**
     * Threads that read positions after JTA commits: a few, so that one slow read does not hold back
     * the others, with a short queue behind them; idle ones end.
     */
    private static ThreadPoolExecutor positionReaders() {
        final ThreadPoolExecutor executor = new ThreadPoolExecutor(
                POSITION_READERS, POSITION_READERS, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(64), task -> {
                    final Thread thread = new Thread(task, "hibernate-routing-commit-position");
                    thread.setDaemon(true);
                    return thread;
                });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }
}
