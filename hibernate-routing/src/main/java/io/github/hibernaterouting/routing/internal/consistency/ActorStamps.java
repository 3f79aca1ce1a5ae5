package io.github.hibernaterouting.routing.internal.consistency;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each actor's stamp: the WAL position of its last committed write, which its reads must reflect.
 *
 * <p>Three places hold it, each at least as fresh as the write and never a replica: this instance's
 * memory (a Caffeine cache, always), a {@code pg_lsn} column of the actors' table on the primary
 * ({@code actor_stamps=TABLE}), and the shared Redis marker ({@code redis.uri}). Reading combines
 * what is available and takes the latest. Thread-safe.
 */
public final class ActorStamps implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ActorStamps.class);

    /** "Reads must use the primary": a mutation is pending or the marker could not be read. No replica ever reaches it. */
    public static final long PRIMARY_ONLY = -1L;

    /** The actors' table of {@code actor_stamps=TABLE}: names already checked to be plain identifiers. */
    public record StampTable(String table, String keyColumn, String column) {}

    private final Cache<String, Long> memory;
    private final DataSource primary;
    private final String advanceSql;
    private final String readSql;
    private final RedisMarker redis;
    private final RoutingMetrics metrics;

    /**
     * @param table the actors' table, or {@code null} to keep stamps in memory (and Redis) only
     * @param redis the shared marker, or {@code null}
     */
    public ActorStamps(
            Duration memoryTtl, StampTable table, RedisMarker redis, DataSource primary, RoutingMetrics metrics) {
        this.memory = Caffeine.newBuilder()
                .expireAfterWrite(memoryTtl)
                .maximumSize(100_000)
                .build();
        this.primary = primary;
        this.metrics = metrics;
        if (table != null) {
            final String keyType = checkTable(table, primary);
            advanceSql = "update " + table.table() + " set " + table.column() + " = greatest(" + table.column()
                    + ", ?::pg_lsn) where " + table.keyColumn() + " = ?::" + keyType;
            // Tagged, so that server logs tell the library's reads of the stamp from the application's.
            readSql = "/* hibernate-routing actor-stamp */ select " + table.column() + "::text from " + table.table()
                    + " where " + table.keyColumn() + " = ?::" + keyType;
        } else {
            advanceSql = null;
            readSql = null;
        }
        this.redis = redis;
    }

    /** Checks that the table and both columns exist and the stamp column is {@code pg_lsn}; returns the key column's type. */
    private static String checkTable(StampTable config, DataSource primary) {
        final String sql = "select a.attname, format_type(a.atttypid, a.atttypmod) from pg_attribute a "
                + "where a.attrelid = to_regclass(?) and a.attname in (?, ?) and not a.attisdropped";
        String keyType = null;
        String stampType = null;
        try (Connection connection = primary.getConnection();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, config.table());
            statement.setString(2, config.keyColumn());
            statement.setString(3, config.column());
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    if (rs.getString(1).equals(config.keyColumn())) {
                        keyType = rs.getString(2);
                    }
                    if (rs.getString(1).equals(config.column())) {
                        stampType = rs.getString(2);
                    }
                }
            }
        } catch (SQLException e) {
            throw RoutingConfigurationException.withMessage(
                    RoutingSettings.ACTOR_STAMPS,
                    "Could not check the actor stamp table '" + config.table() + "' on the primary: " + e.getMessage());
        }
        final String snippet = "alter table " + config.table() + " add column " + config.column() + " pg_lsn;";
        if (keyType == null) {
            throw RoutingConfigurationException.withMessage(
                    RoutingSettings.ACTOR_STAMPS_TABLE,
                    "'" + RoutingSettings.ACTOR_STAMPS + "=TABLE' needs table '"
                            + config.table() + "' with key column '" + config.keyColumn() + "' on the primary; set '"
                            + RoutingSettings.ACTOR_STAMPS_TABLE + "' and '" + RoutingSettings.ACTOR_STAMPS_KEY_COLUMN
                            + "', or use actor_stamps=MEMORY");
        }
        if (!"pg_lsn".equals(stampType)) {
            throw RoutingConfigurationException.withMessage(
                    RoutingSettings.ACTOR_STAMPS_COLUMN,
                    "'" + RoutingSettings.ACTOR_STAMPS
                            + "=TABLE' needs a pg_lsn column '" + config.column() + "' (setting '"
                            + RoutingSettings.ACTOR_STAMPS_COLUMN
                            + "') in table '" + config.table() + "'"
                            + (stampType == null ? "; add it with: " + snippet : ", but it is " + stampType));
        }
        return keyType;
    }

    public boolean redisEnabled() {
        return redis != null;
    }

    /**
     * The position {@code actor}'s reads must reflect, from memory, the Redis marker and the actors'
     * table on the primary ({@code actor_stamps=TABLE}), the latest of them: {@link Lsn#UNKNOWN} if
     * none, {@link #PRIMARY_ONLY} if a mutation is pending or the marker or the table cannot be read.
     *
     * @param heldPrimary the primary connection the unit of work holds (in auto-commit), on which the
     *     table is read; {@code null} if it holds none, and then one is borrowed from the pool for the read
     */
    public long minimumFor(String actor, Connection heldPrimary) {
        final Long remembered = memory.getIfPresent(actor);
        if (remembered != null && remembered == PRIMARY_ONLY) {
            return PRIMARY_ONLY;
        }
        long minimum = remembered == null ? Lsn.UNKNOWN : remembered;
        if (redis != null) {
            try {
                final long marker = redis.read(actor);
                if (marker == PRIMARY_ONLY) {
                    return PRIMARY_ONLY;
                }
                minimum = Lsn.max(minimum, marker);
            } catch (RedisMarker.Unavailable e) {
                metrics.markerError("read");
                LOG.warn("{}; reads of this actor use the primary", e.getMessage());
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

    /** {@link #minimumFor(String, Connection)} for code that holds no primary connection. */
    public long minimumFor(String actor) {
        return minimumFor(actor, null);
    }

    /** The stamp in the actors' table, read from the primary ({@code actor_stamps=TABLE}); else what memory holds. */
    public long readFromPrimary(String actor) throws SQLException {
        final Long remembered = memory.getIfPresent(actor);
        final long stamp = remembered == null || remembered == PRIMARY_ONLY ? Lsn.UNKNOWN : remembered;
        return readSql == null ? stamp : Lsn.max(stamp, readTable(actor, null));
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

    /** Sends {@code actor}'s reads on this instance to the primary until the memory entry expires. */
    public void primaryOnly(String actor) {
        memory.put(actor, PRIMARY_ONLY);
    }

    /**
     * Advances {@code actor}'s stamp to {@code lsn} everywhere, after its write committed, and removes
     * the pending entries of the mutations that committed ({@code pendingIds}, from
     * {@link #beforeMutation}) from the Redis marker. A failure is logged and counted but not thrown:
     * the write is committed, and its pending entry keeps the actor's reads on the primary until it
     * expires.
     */
    public void advance(String actor, long lsn, List<String> pendingIds) {
        // A later commit covers an earlier one whose position was not known (PRIMARY_ONLY).
        memory.asMap().merge(actor, lsn, (old, now) -> old == PRIMARY_ONLY ? now : Lsn.max(old, now));
        if (advanceSql != null) {
            try (Connection connection = primary.getConnection();
                    PreparedStatement statement = connection.prepareStatement(advanceSql)) {
                statement.setString(1, Lsn.format(lsn));
                statement.setString(2, actor);
                statement.executeUpdate();
            } catch (SQLException e) {
                metrics.stampError("advance");
                LOG.error("Could not advance the stamp of an actor in {}: {}", "the actors' table", e.getMessage());
            }
        }
        if (redis != null) {
            try {
                redis.raise(actor, lsn, pendingIds);
            } catch (RedisMarker.Unavailable e) {
                metrics.markerError("raise");
                LOG.warn(
                        "{}; the pending marker keeps the actor's reads on the primary until it expires",
                        e.getMessage());
            }
        }
    }

    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
    }
}
