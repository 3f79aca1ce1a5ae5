package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each actor's stamp: the WAL position of its last committed write, which its reads must reflect.
 *
 * <p>Three places hold it, each at least as fresh as the write and never a replica: this instance's
 * memory (a {@link StampMemory}, always, which past its capacity makes actors meet the stamps it drops), a {@code pg_lsn} column of the actors' table on the primary
 * ({@code actor_stamps=TABLE}), and the shared Redis marker ({@code redis.uri}). Reading combines
 * what is available and takes the latest. Thread-safe.
 */
public final class ActorStamps implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ActorStamps.class);

    /** "Reads must use the primary": a mutation is pending or the marker could not be read. No replica ever reaches it. */
    public static final long PRIMARY_ONLY = -1L;

    /**
     * "A mutation of the actor is in flight": the shared marker holds a pending entry, so a write of the
     * actor may have committed whose position is not stored yet. Any such commit that returned before a
     * read began is behind the primary's position read after that ({@link ReadYourWritesTracker}), so
     * it never leaves {@code internal.consistency}. No replica ever reaches it.
     */
    static final long PENDING = -2L;

    /** The actors' table of {@code actor_stamps=TABLE}: names already checked to be plain identifiers. */
    public record StampTable(String table, String keyColumn, String column) {}

    private final StampMemory memory;
    private final DataSource primary;
    private final String commitSql;
    private final String inTransactionSql;
    /** Stamps that wait for their actor's row; {@code null} without the actors' table. */
    private final DeferredStamps deferred;

    private final String readSql;
    private final RedisMarker redis;
    private final RoutingMetrics metrics;

    /**
     * @param memoryCapacity how many actors' stamps this instance's memory keeps at most
     * @param table the actors' table, or {@code null} to keep stamps in memory (and Redis) only
     * @param redis the shared marker, or {@code null}
     */
    public ActorStamps(
            Duration memoryTtl,
            int memoryCapacity,
            StampTable table,
            RedisMarker redis,
            DataSource primary,
            RoutingMetrics metrics) {
        this.memory = new StampMemory(memoryCapacity, memoryTtl, System::nanoTime);
        this.primary = primary;
        this.metrics = metrics;
        if (table != null) {
            final StampTableSql sql = StampTableSql.check(table, primary);
            commitSql = sql.commit();
            inTransactionSql = sql.inTransaction();
            deferred = new DeferredStamps(primary, sql.retry(), metrics);
            readSql = sql.read();
        } else {
            commitSql = null;
            inTransactionSql = null;
            deferred = null;
            readSql = null;
        }
        this.redis = redis;
    }

    /**
     * Whether a stamp update failed because another transaction held the actor's row longer than it
     * would wait ({@code lock_not_available}, from {@code lock_timeout}).
     */
    static boolean rowBusy(SQLException e) {
        return "55P03".equals(e.getSQLState());
    }

    public boolean redisEnabled() {
        return redis != null;
    }

    /**
     * The position {@code actor}'s reads must reflect, from memory, the Redis marker and the actors'
     * table on the primary ({@code actor_stamps=TABLE}), the latest of them: {@link Lsn#UNKNOWN} if
     * none, {@link #PENDING} if the marker holds a pending mutation, {@link #PRIMARY_ONLY} if the marker
     * or the table cannot be read.
     *
     * @param heldPrimary the primary connection the unit of work holds (in auto-commit), on which the
     *     table is read; {@code null} if it holds none, and then one is borrowed from the pool for the read
     */
    public long minimumFor(String actor, Connection heldPrimary) {
        long minimum = memory.required(actor);
        if (minimum == PRIMARY_ONLY) {
            return PRIMARY_ONLY;
        }
        if (deferred != null) {
            // A stamp that waits for its row is not in the table yet: this instance knows it regardless.
            minimum = Lsn.max(minimum, deferred.pendingFor(actor));
        }
        if (redis != null) {
            try {
                final long marker = redis.read(actor);
                if (marker == PRIMARY_ONLY || marker == PENDING) {
                    return marker;
                }
                minimum = Lsn.max(minimum, marker);
            } catch (RedisMarker.Unavailable e) {
                metrics.markerError("read");
                log(e, "{}; reads of this actor use the primary");
                return PRIMARY_ONLY;
            }
        }
        if (readSql != null) {
            try {
                minimum = Lsn.max(minimum, readTable(actor, heldPrimary));
            } catch (SQLException e) {
                metrics.stampError("read");
                LOG.warn(
                        "Could not read the stamp of an actor from the actors' table ({}); its reads use the primary",
                        e.getMessage());
                return PRIMARY_ONLY;
            }
        }
        return minimum;
    }

    /**
     * The primary's WAL position now, read on {@code heldPrimary} or else on a connection borrowed for it:
     * never behind any commit that has returned. {@link #PRIMARY_ONLY} if it cannot be read.
     */
    long primaryPositionNow(Connection heldPrimary) {
        try {
            if (heldPrimary != null) {
                return WalPositions.insertPosition(heldPrimary);
            }
            try (Connection connection = primary.getConnection()) {
                return WalPositions.insertPosition(connection);
            }
        } catch (SQLException e) {
            LOG.debug(
                    "Could not read the primary's WAL position for a read during a pending mutation ({})",
                    e.getMessage());
            return PRIMARY_ONLY;
        }
    }

    /** {@link #minimumFor(String, Connection)} for code that holds no primary connection. */
    public long minimumFor(String actor) {
        return minimumFor(actor, null);
    }

    /** The stamp in the actors' table, read from the primary ({@code actor_stamps=TABLE}); else what memory holds. */
    public long readFromPrimary(String actor) throws SQLException {
        final long remembered = memory.required(actor);
        final long stamp = remembered == PRIMARY_ONLY ? Lsn.UNKNOWN : remembered;
        return readSql == null ? stamp : Lsn.max(Lsn.max(stamp, deferred.pendingFor(actor)), readTable(actor, null));
    }

    /** The stamp column of {@code actor}'s row, on {@code heldPrimary} or else on a connection borrowed for it. */
    private long readTable(String actor, Connection heldPrimary) throws SQLException {
        if (heldPrimary != null) {
            return readTableOn(heldPrimary, actor);
        }
        try (Connection connection = primary.getConnection()) {
            return readTableOn(connection, actor);
        }
    }

    private long readTableOn(Connection connection, String actor) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(readSql)) {
            statement.setString(1, actor);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() && rs.getString(1) != null ? Lsn.parse(rs.getString(1)) : Lsn.UNKNOWN;
            }
        }
    }

    /**
     * Records that {@code actor} has a mutation starting, in the shared marker.
     *
     * @return the id of the mutation's pending entry, for {@link #advance}; {@code null} without Redis
     * @throws RedisMarker.Unavailable if the marker cannot be stored: the mutation must not run
     */
    public String beforeMutation(String actor) throws RedisMarker.Unavailable {
        if (redis == null) {
            return null;
        }
        try {
            return redis.markPending(actor);
        } catch (RedisMarker.Unavailable e) {
            metrics.markerError("store");
            throw e;
        }
    }

    /** Whether stamps are kept in the actors' table. */
    boolean inTable() {
        return commitSql != null;
    }

    /**
     * Inside a transaction on {@code transaction}: raises {@code actor}'s stamp in the table to the
     * position reached so far, under a savepoint, so that a failure leaves the transaction as it was;
     * the failure is logged and counted. Never waits for the actor's row: if another transaction holds
     * it, the row is skipped and the stamp left to the commit's ({@link #commitPosition}).
     */
    void raiseInTransaction(Connection transaction, String actor) throws SQLException {
        final Savepoint savepoint = transaction.setSavepoint();
        try (PreparedStatement statement = transaction.prepareStatement(inTransactionSql)) {
            statement.setString(1, actor);
            statement.executeQuery().close();
            transaction.releaseSavepoint(savepoint);
        } catch (SQLException e) {
            transaction.rollback(savepoint);
            metrics.stampError("advance");
            LOG.error("Could not advance the stamp of an actor in {}: {}", "the actors' table", e.getMessage());
        }
    }

    /** Sends {@code actor}'s reads on this instance to the primary until the memory entry expires. */
    public void primaryOnly(String actor) {
        metrics.stampsDropped(memory.primaryOnly(actor));
    }

    /**
     * The WAL position of the write just committed on {@code committed}, the primary connection that
     * committed it, now in auto-commit; with {@code actor_stamps=TABLE} and an actor, the same
     * statement raises the actor's stamp in the table to it. On that connection, so that the commit
     * needs no second one from the pool. A failed stamp update is logged and counted, and the position
     * read alone. The update waits for the actor's row at most {@link #COMMIT_LOCK_TIMEOUT_MILLIS}: if
     * another transaction holds it longer, the stamp is deferred ({@link DeferredStamps}) and raised in
     * the table once the row is free; memory, Redis and this instance's deferred stamps cover the actor
     * meanwhile.
     *
     * @param actor the scope's actor, or {@code null}
     * @throws SQLException if the position cannot be read
     */
    public long commitPosition(Connection committed, String actor) throws SQLException {
        if (commitSql != null && actor != null) {
            try (PreparedStatement statement = committed.prepareStatement(commitSql)) {
                statement.setString(1, actor);
                try (ResultSet rs = statement.executeQuery()) {
                    if (rs.next()) {
                        final long lsn = Lsn.parse(rs.getString(1));
                        deferred.landed(actor, lsn);
                        return lsn;
                    }
                }
            } catch (SQLException e) {
                if (rowBusy(e)) {
                    final long lsn = WalPositions.insertPosition(committed);
                    deferred.defer(actor, lsn);
                    return lsn;
                }
                metrics.stampError("advance");
                LOG.error("Could not advance the stamp of an actor in {}: {}", "the actors' table", e.getMessage());
            }
        }
        return WalPositions.insertPosition(committed);
    }

    /**
     * Advances {@code actor}'s stamp to {@code lsn} in memory and in the Redis marker, after its write
     * committed (the actors' table was raised with {@link #commitPosition}), and removes the pending
     * entries of the mutations that committed ({@code pendingIds}, from {@link #beforeMutation}) from
     * the marker. A failure is logged and counted but not thrown: the write is committed, and its
     * pending entry keeps the actor's reads on the primary until it expires.
     */
    public void advance(String actor, long lsn, List<String> pendingIds) {
        // A later commit covers an earlier one whose position was not known (PRIMARY_ONLY).
        metrics.stampsDropped(memory.advance(actor, lsn));
        if (redis != null) {
            try {
                redis.raise(actor, lsn, pendingIds);
            } catch (RedisMarker.Unavailable e) {
                metrics.markerError("raise");
                log(e, "{}; the pending marker keeps the actor's reads on the primary until it expires");
            }
        }
    }

    /** Removes a pending entry of {@code actor}'s whose mutation ended without a commit; see {@link ReadYourWritesTracker#mutationEnded}. */
    void endPending(String actor, String pendingId) {
        if (redis == null) {
            return;
        }
        try {
            redis.endPending(actor, pendingId);
        } catch (RedisMarker.Unavailable e) {
            metrics.markerError("end");
            log(
                    e,
                    "{}; the pending entry of a mutation that committed nothing keeps the actor's reads on the primary"
                            + " until it expires");
        }
    }

    /**
     * Logs a marker failure: at DEBUG during an outage, which the marker logs once as it begins and once as it
     * ends, so that a Redis that is down does not log a line per request; else (an error reply) at WARN.
     */
    private static void log(RedisMarker.Unavailable e, String format) {
        if (e.outage()) {
            LOG.debug(format, e.getMessage());
        } else {
            LOG.warn(format, e.getMessage());
        }
    }

    @Override
    public void close() {
        if (deferred != null) {
            deferred.close();
        }
        if (redis != null) {
            redis.close();
        }
    }
}
