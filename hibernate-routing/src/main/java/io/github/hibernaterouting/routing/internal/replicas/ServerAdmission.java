package io.github.hibernaterouting.routing.internal.replicas;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.github.hibernaterouting.routing.ReplicaSettings;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics.GateOutcome;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether a connection just borrowed from a replica's pool may serve a read, by the server
 * that connection reached: which server it is (asked once per physical connection, the health
 * check's query on the connection itself), whether that server is a standby of this primary, within
 * the lag bounds, and has replayed the position the read needs; where what is known of it is not
 * enough or too old, it asks that server, on that connection, and waits for it a short, bounded time
 * as the LSN gate does for the health check's servers ({@link LsnGate}).
 *
 * <p>A replica whose connections have only ever reached the health check's server is decided as
 * before, by what the health check knows ({@link ReplicaNode#ineligibility}); this costs it one
 * query per new physical connection and a map look-up per borrow.
 *
 * <p>The queries run before the unit of work's statements on the connection, in auto-commit (a
 * pool that hands out connections outside auto-commit has the query rolled back), so a read that
 * follows sees at least what the server had replayed when it answered. Thread-safe.
 */
final class ServerAdmission {
    private static final Logger LOG = LoggerFactory.getLogger(ServerAdmission.class);
    private final LagBounds bounds;
    private final PrimaryReading primary;
    private final long refreshAfterNanos;
    private final long pollIntervalNanos;
    private final RoutingMetrics metrics;
    /** {@code replica_session_pooler}: see {@link #poolerCheck}. */
    private volatile boolean sessionPoolerTrusted;

    /**
     * @param refreshAfterNanos how old what is known of a server may get before a borrow asks it again
     *     (one health-check interval)
     */
    ServerAdmission(
            LagBounds bounds,
            PrimaryReading primary,
            long refreshAfterNanos,
            long pollIntervalNanos,
            RoutingMetrics metrics) {
        this.bounds = bounds;
        this.primary = primary;
        this.refreshAfterNanos = refreshAfterNanos;
        this.pollIntervalNanos = pollIntervalNanos;
        this.metrics = metrics;
    }

    void sessionPoolerTrusted(boolean trusted) {
        this.sessionPoolerTrusted = trusted;
    }

    /** The server {@code physical}, borrowed from {@code node}, reached; asked on the connection the first time. */
    BackendServer serverOf(ReplicaNode node, Connection physical) throws SQLException {
        final BackendServer known = node.servers().known(physical);
        return known != null ? known : check(node, physical);
    }

    /**
     * Why {@code known}, the server {@code physical} reached, cannot serve a read that needs
     * {@code required}, or {@code null} if it can; waits up to {@code maxWaitNanos} for it to replay
     * {@code required}.
     */
    ReplicaNode.Ineligibility admit(
            ReplicaNode node, BackendServer known, Connection physical, long required, long maxWaitNanos)
            throws SQLException {
        if (node.pooler().problem() != null) {
            // Refused whatever server this connection reached: its next transaction may run on another.
            return ReplicaNode.Ineligibility.TRANSACTION_POOLER;
        }
        BackendServer server = known;
        final ServerRegistry registry = node.servers();
        if (!registry.several() && server == registry.probeServer()) {
            // The only server known: decided by what the health check and the LSN gate know of it, as
            // ReplicaNode#ineligibility decides, without asking again.
            return server.ineligibility(bounds, required);
        }
        final long start = System.nanoTime();
        boolean asked = false;
        if (server.checkAgeNanos() > refreshAfterNanos) {
            // The same server, recorded anew (a new record if it was forgotten meanwhile).
            server = check(node, physical);
            asked = true;
        }
        ReplicaNode.Ineligibility why = server.ineligibility(bounds, required);
        if (why == ReplicaNode.Ineligibility.BEHIND_LSN && !asked) {
            server.replayed(replayPosition(physical));
            asked = true;
            why = server.ineligibility(bounds, required);
        }
        if (required == Lsn.UNKNOWN) {
            return why;
        }
        if (why != ReplicaNode.Ineligibility.BEHIND_LSN) {
            if (why == null) {
                metrics.gate(asked ? GateOutcome.CHECKED : GateOutcome.KNOWN, System.nanoTime() - start);
            }
            return why;
        }
        if (maxWaitNanos <= 0 || server.stalled()) {
            // It stands where it stood when a wait for it last timed out: nothing to wait for.
            metrics.gate(maxWaitNanos <= 0 ? GateOutcome.TIMED_OUT : GateOutcome.STALLED, System.nanoTime() - start);
            return why;
        }
        final long deadline = start + maxWaitNanos;
        while (System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Math.min(pollIntervalNanos, Math.max(0, deadline - System.nanoTime())));
            server.replayed(replayPosition(physical));
            if (Lsn.reached(server.replayLsn(), required)) {
                metrics.gate(GateOutcome.WAITED, System.nanoTime() - start);
                return server.ineligibility(bounds, required);
            }
        }
        server.markStalled();
        metrics.gate(GateOutcome.TIMED_OUT, System.nanoTime() - start);
        return why;
    }

    /**
     * Another connection of {@code node}, which may reach another server behind its URL, while the
     * caller holds the ones in {@code held} (refused); {@code null} when none can be had at once. A
     * HikariCP pool hands a thread back the connection it returned last, so the refused ones stay
     * held while another is borrowed, and only while the pool has one idle or room for a new one
     * (never waiting for one in use to free up): at most as many as the pool holds. Any other data
     * source is asked once more, after the refused ones are closed (a pool of unknown size could make
     * a borrow wait while they are held).
     */
    static Connection anotherConnection(ReplicaNode node, java.util.List<Connection> held) throws SQLException {
        final javax.sql.DataSource connections = node.connections();
        final HikariDataSource hikari = BusyPools.hikari(connections);
        if (hikari != null) {
            final HikariPoolMXBean pool = hikari.getHikariPoolMXBean();
            final boolean free = pool != null
                    && (pool.getIdleConnections() > 0 || pool.getTotalConnections() < hikari.getMaximumPoolSize());
            return free ? connections.getConnection() : null;
        }
        if (held.size() > 1) {
            return null;
        }
        closeAll(held);
        return connections.getConnection();
    }

    /** Closes every connection of {@code held} (back to their pool) and empties the list. */
    static void closeAll(java.util.List<Connection> held) throws SQLException {
        SQLException failure = null;
        for (Connection connection : held) {
            try {
                connection.close();
            } catch (SQLException e) {
                failure = e;
            }
        }
        held.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** Runs the health check's query on {@code physical} and records what its server says. */
    private BackendServer check(ReplicaNode node, Connection physical) throws SQLException {
        final BackendServer server;
        final boolean readOnlyByDefault;
        final int serverPid;
        try (Statement statement = physical.createStatement();
                ResultSet rs = statement.executeQuery(WalPositions.REPLICA_CHECK_SQL)) {
            rs.next();
            readOnlyByDefault = "on".equals(rs.getString(12));
            serverPid = rs.getInt(13);
            final String address = rs.getString(9);
            server = node.servers()
                    .server(WalPositions.serverKey(rs), address == null ? "local" : address, rs.getInt(10));
            final String before = server.problem();
            server.record(rs, primary, node.describe(server));
            if (server.problem() != null && !server.problem().equals(before)) {
                LOG.error(server.problem());
            } else if (server.problem() == null && before != null) {
                LOG.info("Replica {} is a standby of this primary again", node.describe(server));
            }
        } finally {
            endTransaction(physical);
        }
        if (!readOnlyByDefault && server.problem() == null && server.inRecovery()) {
            readOnlySession(physical);
        }
        node.servers().remember(physical, server);
        if (node.pooler().problem() == null && !node.pooler().transactionPooled()) {
            poolerCheck(node, physical, serverPid);
        }
        return server;
    }

    /**
     * Whether a connection pooler between the library and the standbys moves one client connection
     * between server connections (PgBouncer's {@code pool_mode=transaction} or {@code statement},
     * pgcat, Supavisor, CloudNativePG's {@code ro} Pooler in transaction mode): then the server a
     * connection was checked on is not the one its next transaction runs on, and no per-connection
     * check can keep the lag bound, the read's position or the standby's identity. No client can see a
     * pooler's mode, so a replica behind a pooler is refused, for good, naming the pooler mode and the
     * fix, unless {@code replica_session_pooler} says the pooler runs in session mode.
     *
     * <p>Cheap when no pooler is in between: the server process the client was told of at connect
     * ({@code BackendKeyData}) is the one that answered the check. A pooler shows its own. Where the
     * setting trusts it, the library still tries to prove it wrong, once per new physical connection
     * until it can: a pooler in session mode gives each client
     * connection a server connection of its own, so if another client connection's next statement is
     * answered by the server process that just answered this one's check, the pooler shares server
     * connections between clients, which only a transaction (or statement) mode does. PgBouncer hands
     * out the server connection used last first, so on a quiet pooler the first try shows it; a busy
     * one shows it on a later connection. The other connection is taken only from a HikariCP pool (the
     * library's own, or one the application supplies) that has one free at once, never waited for.
     */
    private void poolerCheck(ReplicaNode node, Connection physical, int serverPid) throws SQLException {
        final int clientPid = clientPid(physical);
        // A pooler's own key is random, negative as often as not.
        if (clientPid == NO_PID || clientPid == serverPid) {
            return;
        }
        if (!sessionPoolerTrusted) {
            refuse(
                    node,
                    "Replica " + node.describe() + " is reached through a connection pooler (the server process"
                            + " that answers is not the one named at connect). In transaction or statement mode"
                            + " (PgBouncer's pool_mode=transaction) each transaction may run on another standby than"
                            + " the one the library checked, and no client can see a pooler's mode, so the library"
                            + " refuses this replica and reads go to the others or the primary. If the pooler runs"
                            + " pool_mode=session, set " + ReplicaSettings.REPLICA_SESSION_POOLER + "=true; else point"
                            + " the replica URL at the standby itself");
            return;
        }
        // Only from a HikariCP pool with a connection free at once: never waiting, never closing the one held.
        final HikariDataSource hikari = BusyPools.hikari(node.connections());
        final HikariPoolMXBean pool = hikari == null ? null : hikari.getHikariPoolMXBean();
        if (pool == null
                || pool.getIdleConnections() == 0 && pool.getTotalConnections() >= hikari.getMaximumPoolSize()) {
            return;
        }
        final Connection other = node.connections().getConnection();
        boolean shared = false;
        try {
            for (int attempt = 0; attempt < 3 && !shared; attempt++) {
                // The last statement on this connection leaves its server connection on top of the pooler's idle list.
                final int mine = attempt == 0 ? serverPid : backendPid(physical);
                shared = backendPid(other) == mine;
            }
        } finally {
            endTransaction(other);
            other.close();
        }
        if (!shared) {
            return;
        }
        node.pooler().transactionPooled(true);
        refuse(
                node,
                "Replica " + node.describe() + " is reached through a connection pooler that shares server"
                        + " connections between client connections (a transaction or statement pool mode, such as"
                        + " PgBouncer's pool_mode=transaction), although " + ReplicaSettings.REPLICA_SESSION_POOLER
                        + "=true says it runs in session mode: each transaction may run on another standby, and the"
                        + " library checks a standby's identity, lag and replayed position per client connection, so"
                        + " it refuses this replica and reads go to the others or the primary. Point the replica URL"
                        + " at a pooler in pool_mode=session, or at the standby itself");
    }

    /** Refuses every server behind {@code node}'s URL for good, saying why once. */
    private static void refuse(ReplicaNode node, String message) {
        node.pooler().refuse(message);
        LOG.error(message);
    }

    /**
     * pgjdbc's {@code PGConnection}, found by name: the library does not compile against the driver
     * (HikariCP loads it by URL); {@code null} without pgjdbc.
     */
    private static final Class<?> PG_CONNECTION = driverClass("org.postgresql.PGConnection");

    /** What {@link #clientPid} answers for a connection that cannot say. */
    private static final int NO_PID = Integer.MIN_VALUE;

    /** The server process pgjdbc was told of when {@code physical} connected; {@link #NO_PID} if not pgjdbc. */
    private static int clientPid(Connection physical) {
        if (PG_CONNECTION == null) {
            return NO_PID;
        }
        try {
            if (physical.isWrapperFor(PG_CONNECTION)) {
                final Object pg = physical.unwrap(PG_CONNECTION);
                return (Integer) PG_CONNECTION.getMethod("getBackendPID").invoke(pg);
            }
        } catch (SQLException | ReflectiveOperationException | RuntimeException e) {
            // A wrapper that cannot say: no pooler check.
        }
        return NO_PID;
    }

    private static Class<?> driverClass(String name) {
        try {
            return Class.forName(name, false, ServerAdmission.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }

    private static int backendPid(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("/* hibernate-routing pooler-check */ select pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        } finally {
            endTransaction(connection);
        }
    }

    /**
     * Makes the session of {@code physical}, a connection of a server that serves reads, read-only
     * by default, as the library's own replica pools make theirs when they open one (defence in
     * depth: even a routing bug cannot write through it, in auto-commit mode too, where pgjdbc's
     * {@code setReadOnly} does nothing by default). For data sources the library did not build (its
     * {@code replica_datasources}, JNDI, the Spring Boot starter's): once per physical connection, on
     * its first read, outside any transaction, so that no rollback undoes it. Only on a standby (in
     * recovery): a replica data source that reaches a server accepting writes may be the primary's own
     * pool (one pool configured for both roles, with {@code check_recovery} off), whose connections
     * must stay as they are.
     */
    private static void readOnlySession(Connection physical) throws SQLException {
        final boolean autoCommit = physical.getAutoCommit();
        if (!autoCommit) {
            try {
                physical.setAutoCommit(true);
            } catch (SQLException enlisted) {
                // A JTA data source that enlisted the connection in the global transaction: the read
                // fails next, naming the fix (the replica data source must not be transactional).
                return;
            }
        }
        try (Statement statement = physical.createStatement()) {
            statement.execute(ReplicaSet.READ_ONLY_SESSION);
        } finally {
            if (!autoCommit) {
                physical.setAutoCommit(false);
            }
        }
    }

    private static long replayPosition(Connection physical) throws SQLException {
        try (Statement statement = physical.createStatement()) {
            return WalPositions.replayPosition(statement);
        } finally {
            endTransaction(physical);
        }
    }

    /**
     * A connection a pool hands out outside auto-commit began a transaction with the query: roll it
     * back, so the unit of work's own reads take a snapshot of their own, after the answer.
     */
    private static void endTransaction(Connection physical) {
        try {
            if (!physical.getAutoCommit()) {
                physical.rollback();
            }
        } catch (SQLException e) {
            // One enlisted in a global transaction refuses; binding it as a replica connection fails anyway.
        }
    }
}
