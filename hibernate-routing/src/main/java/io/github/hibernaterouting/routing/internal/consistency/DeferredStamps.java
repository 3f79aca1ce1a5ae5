package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stamps of the actors' table that could not be raised when their write committed, because another
 * transaction held the actor's row (an enclosing transaction of the same thread, or any long one): kept
 * here, at most one position per actor, and raised in the table by a background thread once the row is
 * free. Meanwhile they count for this instance's reads ({@link #pendingFor}). Thread-safe.
 */
final class DeferredStamps implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeferredStamps.class);

    /** Beyond this many actors, a deferred stamp is dropped (logged): the retries must not grow without bound. */
    static final int MAXIMUM_ACTORS = 10_000;

    private static final long RETRY_MILLIS = 500;
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final int QUERY_TIMEOUT_SECONDS = 5;

    private final Map<String, Long> pending = new ConcurrentHashMap<>();
    private final DataSource primary;
    private final String retrySql;
    private final RoutingMetrics metrics;
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final AtomicLong deferredSinceLog = new AtomicLong();
    private final AtomicLong lastLog = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);
    private volatile ScheduledExecutorService retries;
    private volatile boolean closed;

    /**
     * @param retrySql raises one actor's stamp, waiting for its row a bounded time: parameters position
     *     (text), actor
     */
    DeferredStamps(DataSource primary, String retrySql, RoutingMetrics metrics) {
        this.primary = primary;
        this.retrySql = retrySql;
        this.metrics = metrics;
    }

    /** {@code actor}'s stamp could not be raised to {@code lsn} now: raise it later. */
    void defer(String actor, long lsn) {
        metrics.stampDeferred();
        if (pending.size() >= MAXIMUM_ACTORS && !pending.containsKey(actor)) {
            LOG.warn(
                    "{} actors' stamps already wait for their rows in the actors' table; one more is dropped, and"
                            + " other instances learn of that write only from the Redis marker, if any",
                    MAXIMUM_ACTORS);
            return;
        }
        pending.merge(actor, lsn, Lsn::max);
        deferredSinceLog.incrementAndGet();
        logNow();
        schedule();
    }

    /** A stamp of {@code actor}'s reached the table at {@code lsn}: a deferred one no later than that is moot. */
    void landed(String actor, long lsn) {
        final Long waiting = pending.get(actor);
        if (waiting != null && waiting <= lsn) {
            pending.remove(actor, waiting);
        }
    }

    /** The deferred stamp of {@code actor}, {@link Lsn#UNKNOWN} if none. */
    long pendingFor(String actor) {
        final Long waiting = pending.get(actor);
        return waiting == null ? Lsn.UNKNOWN : waiting;
    }

    /** Rate-limited: a lock held for long defers every commit of the actor. No actor is named. */
    private void logNow() {
        final long now = System.nanoTime();
        final long last = lastLog.get();
        if (now - last >= LOG_EVERY_NANOS && lastLog.compareAndSet(last, now)) {
            LOG.warn(
                    "{} actor stamp(s) deferred since the last message: another transaction held the actor's row in"
                            + " the actors' table; they are raised once the row is free. Until then this instance (and"
                            + " other instances through the Redis marker, if configured) keeps the actors' reads on"
                            + " servers that have their writes",
                    deferredSinceLog.getAndSet(0));
        }
    }

    private void schedule() {
        if (closed || !scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            executor().schedule(this::retry, RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            // Closed meanwhile.
            scheduled.set(false);
        }
    }

    private ScheduledExecutorService executor() {
        ScheduledExecutorService executor = retries;
        if (executor == null) {
            synchronized (this) {
                executor = retries;
                if (executor == null) {
                    executor = Executors.newSingleThreadScheduledExecutor(task -> {
                        final Thread thread = new Thread(task, "hibernate-routing-deferred-stamps");
                        thread.setDaemon(true);
                        return thread;
                    });
                    retries = executor;
                }
            }
        }
        return executor;
    }

    /** One pass over the deferred stamps, on one connection borrowed from the primary pool, outside any transaction. */
    private void retry() {
        scheduled.set(false);
        if (closed || pending.isEmpty()) {
            return;
        }
        try (Connection connection = primary.getConnection()) {
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true);
            }
            for (Map.Entry<String, Long> entry : pending.entrySet()) {
                final String actor = entry.getKey();
                final long lsn = entry.getValue();
                try (PreparedStatement statement = connection.prepareStatement(retrySql)) {
                    statement.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
                    statement.setString(1, Lsn.format(lsn));
                    statement.setString(2, actor);
                    statement.execute();
                    // A later deferral of the actor (a higher position) stays.
                    pending.remove(actor, lsn);
                } catch (SQLException e) {
                    if (!ActorStamps.rowBusy(e)) {
                        throw e;
                    }
                }
            }
        } catch (SQLException | RuntimeException e) {
            metrics.stampError("advance");
            LOG.debug("Raising deferred actor stamps failed ({}); trying again", e.getMessage());
        }
        if (!pending.isEmpty()) {
            schedule();
        }
    }

    @Override
    public void close() {
        closed = true;
        final ScheduledExecutorService executor = retries;
        if (executor != null) {
            executor.shutdownNow();
        }
    }
}
