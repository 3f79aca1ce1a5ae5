package io.github.hibernaterouting.routing.internal.consistency;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Every query the library makes for a WAL position, and what its answer means; with
 * {@code actor_stamps=TABLE}, {@link ActorStamps#commitPosition} reads the insert position in the
 * statement that raises the actor's stamp.
 *
 * <p>On the primary, the <em>insert</em> position ({@code pg_current_wal_insert_lsn()}) after a
 * commit: with {@code synchronous_commit=off} a commit returns before its record is written, and
 * the insert position covers it even then. On a replica, the <em>replay</em> position
 * ({@code pg_last_wal_replay_lsn()}): what a read there can see.
 *
 * <p>The two are counted differently at a WAL page boundary. When the last record ends exactly where a page
 * ends, the insert position points past the next page's header (24 bytes; 40 at the start of a segment, whose
 * page has the long header), where the next record will start, while a standby that has replayed that record
 * reports the boundary itself. Nothing lies between the two, so the library takes every insert position through
 * {@link #replayable}: otherwise no replica would reach such a position until the primary wrote more WAL, and
 * reads that need it would go to the primary, or fail under {@code REPLICA}.
 */
public final class WalPositions {
    /** Tagged so that server logs tell the gate's checks from the application's reads. */
    private static final String REPLAY_SQL = "/* hibernate-routing lsn-gate */ select pg_last_wal_replay_lsn()::text";

    private static final String INSERT_SQL =
            "with position as materialized (select pg_catalog.pg_current_wal_insert_lsn() as lsn) select "
                    + replayable("lsn") + "::text from position";

    /** The size of a WAL page header, short and long (a segment's first page), on 64-bit servers. */
    private static final int SHORT_PAGE_HEADER = 24;

    private static final int LONG_PAGE_HEADER = 40;

    /**
     * SQL for the position a standby reports once it has replayed everything before the insert position
     * {@code insertLsn} (a {@code pg_lsn} expression, evaluated more than once: a column, not a volatile call): the
     * page boundary for a position right after a page header, the position itself otherwise. The page and segment
     * sizes are the server's ({@code wal_block_size}, {@code wal_segment_size}).
     */
    static String replayable(String insertLsn) {
        final String offset = "(" + insertLsn + " - '0/0'::pg_lsn)";
        return "(" + insertLsn + " - case when " + offset
                + " % pg_catalog.pg_size_bytes(pg_catalog.current_setting('wal_segment_size')) = " + LONG_PAGE_HEADER
                + " then " + LONG_PAGE_HEADER + " when " + offset
                + " % pg_catalog.current_setting('wal_block_size')::numeric = " + SHORT_PAGE_HEADER
                + " then " + SHORT_PAGE_HEADER + " else 0 end)";
    }

    /**
     * Which cluster a server belongs to and where in its history it is: the system identifier, set by
     * {@code initdb} and shared by every standby made from that cluster, and the timeline of the last
     * checkpoint (a standby's last restartpoint). Both functions are executable by every role unless
     * an administrator revoked that.
     */
    private static final String IDENTITY_COLUMNS =
            "(select system_identifier::text from pg_catalog.pg_control_system()), "
                    + "(select timeline_id::text from pg_catalog.pg_control_checkpoint())";

    /**
     * Which server a connection reached, whatever URL, relay or load balancer it went through: the
     * address and port the server accepted it on, and when the server started (a restarted server is
     * another one: it replays again from its last restartpoint). Columns 9 to 11 of
     * {@link #REPLICA_CHECK_SQL}; the identity is the port and the start time ({@link #serverKey}),
     * not the address, which differs for one server reached over IPv4 and IPv6 or two interfaces.
     */
    private static final String SERVER_COLUMNS =
            "host(inet_server_addr()), inet_server_port(), pg_postmaster_start_time()::text";

    /**
     * The health check of a replica: whether it is in recovery, its replay position, whether it has
     * replayed all it received, seconds since it last replayed a transaction, the isolation level
     * its connections' transactions get by default ({@link IsolationLevel#parse}), its identity
     * (system identifier and timeline of its last restartpoint), and the timeline it receives WAL on
     * now ({@code pg_stat_wal_receiver.received_tli}; null without a WAL receiver, or for a role
     * without {@code pg_read_all_stats}, which PostgreSQL shows only the receiver's pid), which server
     * answered ({@link #SERVER_COLUMNS}), whether the session's transactions are read-only by
     * default (column 12, {@code on} or {@code off}), and the server process that answered (column 13,
     * {@code pg_backend_pid()}, which a connection pooler in between does not show the client at connect).
     */
    public static final String REPLICA_CHECK_SQL = "select pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, "
            + "coalesce(pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn(), true), "
            + "extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp()), "
            + "current_setting('transaction_isolation'), " + IDENTITY_COLUMNS
            + ", (select received_tli::text from pg_catalog.pg_stat_wal_receiver), " + SERVER_COLUMNS
            + ", current_setting('default_transaction_read_only'), pg_backend_pid()";

    /** The identity of the server that answered {@link #REPLICA_CHECK_SQL} on {@code rs}, from columns 10 and 11. */
    public static String serverKey(ResultSet rs) throws SQLException {
        return serverKey(rs.getInt(10), rs.getString(11));
    }

    private static String serverKey(int port, String startTime) {
        return port + "@" + startTime;
    }

    /**
     * The health check of the primary: its WAL write position, for the byte lag, the isolation level
     * its connections' transactions get by default (the server's, database's, role's, URL's or pool's
     * {@code default_transaction_isolation}), and its identity: the system identifier, and the
     * timeline it writes on now, from the name of its current WAL file. (Its last checkpoint's
     * timeline, {@code pg_control_checkpoint()}, stays the old one after a promotion until the new
     * primary's first checkpoint completes, which can take minutes.)
     */
    private static final String PRIMARY_CHECK_SQL = "select pg_current_wal_lsn()::text,"
            + " current_setting('transaction_isolation'),"
            + " (select system_identifier::text from pg_catalog.pg_control_system()),"
            + " pg_catalog.pg_walfile_name(pg_current_wal_lsn()),"
            + " " + SERVER_COLUMNS;

    /** SQLSTATE of a function the role may not execute. */
    public static final String INSUFFICIENT_PRIVILEGE = "42501";

    /**
     * What the health check learns from the primary.
     *
     * @param server which server answered, as {@link #serverKey} says (port and start time): a
     *     primary URL that reaches another server than before (a failover, a restart) leaves the pooled
     *     connections to the old one dead
     */
    public record PrimaryState(
            long writePosition, int defaultIsolation, String systemIdentifier, int timeline, String server) {}

    private WalPositions() {}

    /**
     * The primary's WAL insert position on {@code connection}, as a standby reports it once it has replayed all
     * WAL before it ({@link #replayable}): never behind any commit that has returned.
     */
    public static long insertPosition(Connection connection) throws SQLException {
        return single(connection, INSERT_SQL, 0);
    }

    /** The primary's write position, default isolation level and identity, for the health check. */
    public static PrimaryState primaryState(Statement statement) throws SQLException {
        try (ResultSet rs = statement.executeQuery(PRIMARY_CHECK_SQL)) {
            return rs.next()
                    ? new PrimaryState(
                            Lsn.parse(rs.getString(1)),
                            IsolationLevel.parse(rs.getString(2)),
                            rs.getString(3),
                            walFileTimeline(rs.getString(4)),
                            serverKey(rs.getInt(6), rs.getString(7)))
                    : new PrimaryState(Lsn.UNKNOWN, IsolationLevel.UNKNOWN, null, 0, null);
        }
    }

    /** The timeline of a WAL file name (its first 8 hexadecimal digits), {@code 0} if unknown. */
    public static int walFileTimeline(String walFileName) {
        return walFileName == null || walFileName.length() < 8
                ? 0
                : Integer.parseUnsignedInt(walFileName.substring(0, 8), 16);
    }

    /** A timeline number as the identity columns give it, {@code 0} if unknown. */
    public static int timeline(String text) {
        return text == null ? 0 : Integer.parseInt(text.trim());
    }

    /**
     * The statements that let {@code role} read the identity columns, for the message of a server
     * that refused them ({@link #INSUFFICIENT_PRIVILEGE}).
     */
    public static String identityGrants(String role) {
        final String to = " to " + (role == null ? "<the role of the library's connections>" : role);
        return "grant execute on function pg_catalog.pg_control_system()" + to
                + "; grant execute on function pg_catalog.pg_control_checkpoint()" + to;
    }

    /** How far a replica has replayed, {@link Lsn#UNKNOWN} if it is not a standby. */
    public static long replayPosition(Statement statement) throws SQLException {
        try (ResultSet rs = statement.executeQuery(REPLAY_SQL)) {
            return rs.next() ? Lsn.parse(rs.getString(1)) : Lsn.UNKNOWN;
        }
    }

    private static long single(Connection connection, String sql, int queryTimeoutSeconds) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            if (queryTimeoutSeconds > 0) {
                statement.setQueryTimeout(queryTimeoutSeconds);
            }
            try (ResultSet rs = statement.executeQuery(sql)) {
                return rs.next() ? Lsn.parse(rs.getString(1)) : Lsn.UNKNOWN;
            }
        }
    }
}
