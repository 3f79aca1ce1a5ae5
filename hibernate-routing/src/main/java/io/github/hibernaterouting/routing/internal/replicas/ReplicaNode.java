package io.github.hibernaterouting.routing.internal.replicas;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * One hot standby: where its connections come from, its circuit breaker, and what was last learned
 * about it.
 *
 * <p>What is known comes from the library's own connection to the server ({@link ServerProbe}),
 * never from the application's pool, so a pool that the application keeps busy says nothing about
 * the server's health. The state fields are written by the health check (and by on-demand checks)
 * and read on every routing decision without locking; each is a single volatile, so a reader may
 * combine values from two checks, which only ever errs by one check interval.
 */
public final class ReplicaNode {
    /** Why a replica cannot serve a read right now; the value doubles as a metrics tag. */
    public enum Ineligibility {
        DOWN(RouteReason.REPLICA_DOWN),
        /** Not a standby of this primary: another cluster, or another timeline ({@link #problem()}). */
        FOREIGN(RouteReason.FOREIGN_SERVER),
        TRANSACTION_POOLER(RouteReason.TRANSACTION_POOLER), // behind a connection pooler (see problem())
        NOT_IN_RECOVERY(RouteReason.NOT_IN_RECOVERY),
        /** Its last successful health check is older than {@link LagBounds#staleAfterNanos()}. */
        LAG_UNKNOWN(RouteReason.LAG_UNKNOWN),
        LAG_BOUND(RouteReason.LAG_BOUND),
        BEHIND_LSN(RouteReason.LSN_FALLBACK);

        private final RouteReason fallback;

        Ineligibility(RouteReason fallback) {
            this.fallback = fallback;
        }

        /** The reason a read that wanted a replica went to the primary instead. */
        public static RouteReason fallbackReason(Ineligibility why) {
            return why == null ? RouteReason.REPLICA_DOWN : why.fallback;
        }
    }

    private final int index;
    private final String name;
    private final String maskedUrl;
    private final DataSource connections;
    private final CircuitBreaker breaker;
    private final ServerProbe probe;
    /** Whether the application supplies {@link #connections}: the library then never empties its pool. */
    private final boolean supplied;

    volatile boolean checked;
    /** How recent an answered check makes a pool that cannot give a connection busy ({@link #busy}). */
    private volatile long answeredWithinNanos = 1_000_000_000L;
    /** {@link System#nanoTime()} of the last health check that answered. */
    private volatile long checkedAtNanos;
    /** The servers its connections reached; several behind a load-balanced URL. */
    private final ServerRegistry servers = new ServerRegistry();
    /** Why the library refuses this server as a replica of its primary, naming it; {@code null} if it does not. */
    private volatile String problem;
    /** What the library found of a connection pooler in front of this replica ({@link ServerAdmission}). */
    private final PoolerVerdict pooler = new PoolerVerdict();

    volatile boolean reachable;
    volatile boolean inRecovery = true;
    volatile long replayLsn = Lsn.UNKNOWN;
    /** {@link System#nanoTime()} when {@link #replayLsn} was last read from the server (a check or the gate). */
    private volatile long replayObservedAt;

    /**
     * {@link System#nanoTime()} when the primary position that {@link #lagBytes} was measured against
     * was read; {@code 0} while none was. A replica's lag is only as recent as this reading: a primary
     * probe that stops answering leaves the lag unknown, never 0 against a frozen position.
     */
    private volatile long lagBasisNanos;
    /** The primary reading its lag was measured against, {@code null} before the first check. */
    private volatile PrimaryReading measuredAgainst;

    volatile long lagBytes = -1;
    volatile double lagSeconds = Double.NaN;
    /**
     * The isolation level a pooled connection's transactions get unless told otherwise (the server's,
     * database's, role's, URL's or pool's {@code default_transaction_isolation});
     * {@link IsolationLevel#UNKNOWN} until a check says.
     */
    private volatile int defaultIsolation = IsolationLevel.UNKNOWN;

    /**
     * @param connections the application's connections to the replica
     * @param supplied whether the application supplies {@code connections} (a data source it built),
     *     rather than the library (a pool for a URL of {@code replica_urls})
     * @param probe the library's own connection to it, for the health check and the LSN gate
     */
    public ReplicaNode(
            int index,
            String name,
            String maskedUrl,
            DataSource connections,
            boolean supplied,
            CircuitBreaker breaker,
            ServerProbe probe) {
        this.index = index;
        this.name = name;
        this.maskedUrl = maskedUrl;
        this.connections = connections;
        this.supplied = supplied;
        this.breaker = breaker;
        this.probe = probe;
    }

    /** A replica whose checks borrow one connection from {@code connections} and keep it (tests with fake servers). */
    public ReplicaNode(int index, String name, String maskedUrl, DataSource connections, CircuitBreaker breaker) {
        this(index, name, maskedUrl, connections, false, breaker, new ServerProbe(connections::getConnection, 2, null));
    }

    /** The replica's position in the configuration, from 0. */
    public int index() {
        return index;
    }

    /** The node number in the meters: 1 + {@link #index()} (0 is the primary). */
    public int metricsNode() {
        return index + 1;
    }

    /** The replica's name in logs and meter tags ({@code replica1}, {@code replica2}, …). */
    public String name() {
        return name;
    }

    /** Where connections to this replica come from. */
    public DataSource connections() {
        return connections;
    }

    public CircuitBreaker breaker() {
        return breaker;
    }

    /** The last known replay position, {@link Lsn#UNKNOWN} before the first check. */
    public long replayLsn() {
        return replayLsn;
    }

    /**
     * Bytes of WAL the replica had left to replay at the last check, {@code -1} if unknown: also once a
     * check of the primary failed after the reading it was measured against.
     */
    public long lagBytes() {
        return lagBasisNanos != 0 && lagBasis() == 0 ? -1 : lagBytes;
    }

    /** Seconds since the replica last replayed a transaction while behind, {@code 0} when caught up, NaN if unknown. */
    public double lagSeconds() {
        return lagSeconds;
    }

    /** Whether the breaker is closed, the last check reached the server, and the library does not refuse it. */
    public boolean isUp() {
        return reachable && breaker.isClosed() && problem == null && pooler.problem() == null;
    }

    /** The library's own connection to the server. */
    ServerProbe probe() {
        return probe;
    }

    /**
     * Why the library refuses this server as a replica of its primary (a standby of another cluster,
     * or of another timeline, or a role that may not read its identity), naming it by its masked URL;
     * {@code null} if it does not.
     */
    public String problem() {
        final String refused = pooler.problem();
        return refused != null ? refused : problem;
    }

    PoolerVerdict pooler() {
        return pooler;
    }

    void problem(String problem) {
        this.problem = problem;
    }

    /** The replica's name and masked URL, as logs and messages name it. */
    public String describe() {
        return toString();
    }

    /**
     * Whether {@code e}, from borrowing one of the application's connections, only says that the pool
     * had none free in time (every connection in use, the server answering): the replica is busy, not
     * failed ({@link BusyPools}).
     */
    public boolean busy(SQLException e) {
        return BusyPools.busy(connections, e, reachable && System.nanoTime() - checkedAtNanos <= answeredWithinNanos);
    }

    /** Sets how recent the last answered check must be for {@link #busy} to call a pool busy. */
    void answeredWithin(long nanos) {
        this.answeredWithinNanos = nanos;
    }

    /**
     * Whether the library's own pool for this replica can give a connection, asked once when the replica
     * answers its health check again after it was down. HikariCP retries a failing connection with a
     * backoff of up to 5 s, so for a while after a server comes back its pool may still be waiting to try
     * again; every read that took the replica then would wait the full connection timeout, fail, and open
     * the breaker again. So the health check borrows one connection first (on its own thread, waiting at
     * most the connection timeout), before it closes the breaker, and keeps the breaker open until that
     * works. A pool that is only busy (every connection in use, none failing) is ready. Data sources the
     * library did not build are not tried: their pools are the application's.
     */
    boolean poolReady() {
        if (ownPool() == null) {
            return true;
        }
        try (Connection ignored = connections.getConnection()) {
            return true;
        } catch (SQLException e) {
            if (busy(e)) {
                return true;
            }
            breaker.reopen();
            return false;
        }
    }

    /** See the field; read when a replica connection is bound, to give it the isolation level the unit of work needs. */
    public int defaultIsolation() {
        return defaultIsolation;
    }

    /**
     * The library's own pool's state, or {@code null} when the connections come from elsewhere (a data
     * source the application supplies is the application's to empty, even when it is a HikariCP pool).
     */
    public HikariPoolMXBean ownPool() {
        return !supplied && connections instanceof HikariDataSource pool ? pool.getHikariPoolMXBean() : null;
    }

    /**
     * Why this replica cannot serve a read needing {@code minimumLsn}, or {@code null} if it can.
     * Requests only use replicas whose breaker is closed; the health check makes the half-open trial.
     */
    public Ineligibility ineligibility(LagBounds bounds, long minimumLsn) {
        if (!reachable || !breaker.isClosed()) {
            return Ineligibility.DOWN;
        }
        if (pooler.problem() != null) {
            return Ineligibility.TRANSACTION_POOLER;
        }
        if (servers.several()) {
            // Behind one URL, several servers: identity, recovery, the lag bound and the position are
            // decided against the server each connection reaches, when it is borrowed (ReplicaSet#admit).
            return bounds.stale(checkedAtNanos, lagBasis()) ? Ineligibility.LAG_UNKNOWN : null;
        }
        if (problem != null) {
            return Ineligibility.FOREIGN;
        }
        if (bounds.checkRecovery() && !inRecovery) {
            return Ineligibility.NOT_IN_RECOVERY;
        }
        return bounds.judge(checkedAtNanos, lagBasis(), lagBytes, lagSeconds, replayLsn, minimumLsn);
    }

    /**
     * When the primary reading its lag was measured against was read, if that lag still counts, else
     * {@code 0}: a failed check of the primary since makes it unknown ({@link PrimaryReading#lagBasis}).
     */
    private long lagBasis() {
        final PrimaryReading reading = measuredAgainst;
        return reading == null ? lagBasisNanos : reading.lagBasis(lagBasisNanos);
    }

    /** The servers this replica's connections reached. */
    ServerRegistry servers() {
        return servers;
    }

    /** The servers this replica's connections reached, by address and port. */
    public java.util.List<BackendServer> backendServers() {
        return servers.servers();
    }

    /** How messages name one server of this replica: the replica, and the server's address. */
    String describe(BackendServer server) {
        return this + " server " + server;
    }

    /**
     * Asks the replica where it is, over the library's own connection, and records the answer, as
     * the replica's and as that of the server the connection reached ({@link #servers()}).
     *
     * @param primary the primary's reading, to measure the lag against and compare identities with
     * @throws SQLException if it did not answer; the replica is then taken out of rotation
     */
    void check(PrimaryReading primary) throws SQLException {
        try {
            probe.query(statement -> {
                try (ResultSet rs = statement.executeQuery(WalPositions.REPLICA_CHECK_SQL)) {
                    rs.next();
                    final String address = rs.getString(9);
                    final BackendServer server = servers.server(
                            WalPositions.serverKey(rs), address == null ? "local" : address, rs.getInt(10));
                    server.record(rs, primary, toString());
                    servers.probeServer(server);
                    // Exactly what the server says, even a lower replay position than before: a standby
                    // restarted after a crash replays again from its last restartpoint.
                    inRecovery = server.inRecovery();
                    replayLsn = server.replayLsn();
                    lagBytes = server.lagBytes();
                    lagSeconds = server.lagSeconds();
                    lagBasisNanos = server.lagBasisNanos();
                    measuredAgainst = primary;
                    defaultIsolation = server.defaultIsolation();
                }
                return null;
            });
            checkedAtNanos = System.nanoTime();
            replayObservedAt = checkedAtNanos;
            // Coming back after a failure: reads may use it only once its pool can give a connection too.
            final boolean comingBack = checked && (!reachable || !breaker.isClosed());
            reachable = true;
            if ((breaker.isClosed() || breaker.trialDue()) && (!comingBack || poolReady())) {
                breaker.onSuccess();
            }
        } catch (SQLException e) {
            markFailed();
            throw e;
        } finally {
            checked = true;
        }
    }

    /**
     * Asks the replica how far it has replayed, for the LSN gate, over the library's own connection; a
     * failure takes it out of rotation. Callers that queue behind another caller's question take its
     * answer rather than ask again.
     */
    void refreshReplay() {
        final long before = probe.completed();
        try {
            probe.queryUnlessAnsweredSince(before, statement -> {
                final long replay = WalPositions.replayPosition(statement);
                if (replay != Lsn.UNKNOWN) {
                    observedReplay(replay);
                    replayObservedAt = System.nanoTime();
                }
                return null;
            });
        } catch (SQLException e) {
            markFailed();
        }
    }

    /**
     * Takes the replica out of rotation after a failure: opens (or keeps open) its breaker and drops
     * its pooled connections, which a restarted or killed server has invalidated anyway.
     *
     * @return whether this failure opened the breaker
     */
    public boolean markFailed() {
        reachable = false;
        // Whatever it had replayed is no longer known once it comes back (see record).
        replayLsn = Lsn.UNKNOWN;
        final HikariPoolMXBean pool = ownPool();
        if (pool != null) {
            pool.softEvictConnections();
        }
        return breaker.onFailure();
    }

    /** How long ago {@link #replayLsn()} was read from the server, in nanoseconds. */
    long replayAgeNanos() {
        return System.nanoTime() - replayObservedAt;
    }

    /** Raises the known replay position after a check made elsewhere (for example by the LSN gate). */
    void observedReplay(long lsn) {
        if (Lsn.reached(lsn, replayLsn)) {
            replayLsn = lsn;
        }
        final BackendServer server = servers.probeServer();
        if (server != null) {
            server.replayed(lsn);
        }
    }

    /** Whether this replica's connections have reached more than one server (a load-balanced URL). */
    public boolean severalServers() {
        return servers.several();
    }

    /** Throws away {@code physical} if it comes from the library's own pool; the caller still closes it. */
    public void evictOwn(Connection physical) {
        if (ownPool() != null) {
            evict(physical);
        }
    }

    /** Throws away a physical connection that must not go back to the pool (one that could not be made read-only again). */
    public void evict(Connection physical) {
        if (connections instanceof HikariDataSource pool) {
            pool.evictConnection(physical);
        }
    }

    @Override
    public String toString() {
        return name + "(" + maskedUrl + ")";
    }
}
