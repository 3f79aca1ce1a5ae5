package io.github.hibernaterouting.routing.internal.replicas;

import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.routing.ReplicaSettings.LoadBalancing;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics.GateOutcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * The replicas of one persistence unit: choosing one for a read, waiting for one to reach a WAL
 * position, and the background health check that keeps what is known about them current.
 *
 * <p>Thread-safe. {@link #start()} checks every replica once and schedules the health check;
 * {@link #close()} stops it (it does not close the replicas' connection sources).
 */
public final class ReplicaSet implements AutoCloseable {
    /**
     * Makes a session's transactions read-only by default: run on every replica connection, by the
     * library's own pools when they open one, on its first read for any other.
     */
    public static final String READ_ONLY_SESSION = "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY";

    private final List<ReplicaNode> nodes;
    private final LagBounds bounds;
    private final ServerProbe primaryProbe;
    private final ReplicaSelector selector;
    private final LsnGate gate;
    private final ReplicaMonitor monitor;
    private final ServerAdmission admission;
    /** How often a wait for a replica's position asks it again, in nanoseconds. */
    private final long lsnPollNanos;

    private final long discoveryIntervalNanos;
    private final RoutingMetrics metrics;

    /** A replica set whose health check asks the primary over a connection borrowed from {@code primary} and kept (tests). */
    public ReplicaSet(
            List<ReplicaNode> nodes,
            LagBounds bounds,
            LoadBalancing loadBalancing,
            DataSource primary,
            Duration healthCheckInterval,
            Duration lsnPollInterval,
            RoutingMetrics metrics) {
        this(
                nodes,
                bounds,
                loadBalancing,
                new ServerProbe(primary::getConnection, 2, null),
                null,
                healthCheckInterval,
                lsnPollInterval,
                metrics);
    }

    /**
     * @param primaryProbe the library's own connection to the primary, where the health check reads
     *     its position (for the byte lag) and its identity
     * @param ownPrimaryPool the pool of the primary's connections when the library built it, dropped
     *     when the primary stops answering (a restarted primary has invalidated them); {@code null} for
     *     a data source the application supplies, which the library never empties
     * @param healthCheckInterval how often the health check runs
     * @param lsnPollInterval how often the LSN gate asks the replicas while it waits
     */
    public ReplicaSet(
            List<ReplicaNode> nodes,
            LagBounds bounds,
            LoadBalancing loadBalancing,
            ServerProbe primaryProbe,
            HikariDataSource ownPrimaryPool,
            Duration healthCheckInterval,
            Duration lsnPollInterval,
            RoutingMetrics metrics) {
        this.nodes = List.copyOf(nodes);
        this.bounds = bounds;
        this.metrics = metrics;
        this.selector = new ReplicaSelector(this.nodes, bounds, loadBalancing);
        this.gate = new LsnGate(this.nodes, selector, bounds, lsnPollInterval.toNanos(), metrics);
        this.lsnPollNanos = lsnPollInterval.toNanos();
        final Runnable primaryFailed = () -> {
            if (ownPrimaryPool != null && ownPrimaryPool.getHikariPoolMXBean() != null) {
                ownPrimaryPool.getHikariPoolMXBean().softEvictConnections();
            }
        };
        this.primaryProbe = primaryProbe;
        this.monitor =
                new ReplicaMonitor(primaryProbe, primaryFailed, this.nodes, bounds, healthCheckInterval.toMillis());
        this.discoveryIntervalNanos = healthCheckInterval.toNanos();
        this.admission =
                new ServerAdmission(bounds, monitor, healthCheckInterval.toNanos(), lsnPollInterval.toNanos(), metrics);
        for (ReplicaNode node : this.nodes) {
            final int number = node.metricsNode();
            metrics.replicaGauge(
                    "hibernate.routing.replica.lag.bytes",
                    "Bytes of WAL the replica had left to replay at the last check",
                    "bytes",
                    number,
                    node,
                    n -> n.lagBytes() < 0 ? Double.NaN : n.lagBytes());
            metrics.replicaGauge(
                    "hibernate.routing.replica.lag.seconds",
                    "Seconds since the replica last replayed a transaction while behind; 0 when caught up",
                    "seconds",
                    number,
                    node,
                    ReplicaNode::lagSeconds);
            // The gauges above follow the server the health check reached; behind a load-balanced URL
            // another server may stall unseen, so these take the worst of every server known there,
            // tagged by the replica only (a tag per server address would change with every restart).
            metrics.replicaGauge(
                    "hibernate.routing.replica.lag.worst.bytes",
                    "Bytes of WAL left to replay of the server furthest behind among those the replica's connections"
                            + " reached, each at its last answer",
                    "bytes",
                    number,
                    node,
                    n -> {
                        final long bytes = n.servers().worstLagBytes();
                        return bytes < 0 ? Double.NaN : bytes;
                    });
            metrics.replicaGauge(
                    "hibernate.routing.replica.lag.worst.seconds",
                    "Seconds behind of the server furthest behind among those the replica's connections reached, each"
                            + " at its last answer; 0 when all are caught up",
                    "seconds",
                    number,
                    node,
                    n -> n.servers().worstLagSeconds());
            metrics.replicaGauge(
                    "hibernate.routing.replica.servers",
                    "Servers the replica's connections reached: more than 1 behind a load-balanced URL, each decided"
                            + " by itself",
                    null,
                    number,
                    node,
                    n -> n.servers().count());
            metrics.replicaGauge(
                    "hibernate.routing.replica.up",
                    "1 when the replica answered its last check and its circuit breaker is closed",
                    null,
                    number,
                    node,
                    n -> n.isUp() ? 1 : 0);
            metrics.replicaGauge(
                    "hibernate.routing.replica.circuit.state",
                    "Circuit breaker state: 0 closed, 1 open, 2 half-open",
                    null,
                    number,
                    node,
                    n -> n.breaker().state().ordinal());
        }
    }

    /** The replicas, in configuration order. */
    public List<ReplicaNode> nodes() {
        return nodes;
    }

    /** When a replica may serve at all. */
    public LagBounds bounds() {
        return bounds;
    }

    /** Runs one health check now, so routing starts from facts, then schedules the rest. */
    public void start() {
        monitor.start();
    }

    /**
     * The isolation level the primary's pooled connections get by default, read by the health check
     * (at start, then at every check); {@link io.github.hibernaterouting.routing.internal.consistency.IsolationLevel#UNKNOWN}
     * while the primary could not be asked.
     */
    public int primaryDefaultIsolation() {
        return monitor.primaryDefaultIsolation();
    }

    /** The primary's WAL write position as the health check last read it; {@link Lsn#UNKNOWN} before. */
    /** The library's own connection to the primary, outside the application's pool and any transaction. */
    public ServerProbe primaryProbe() {
        return primaryProbe;
    }

    public long primaryPosition() {
        return monitor.position();
    }

    /** The timeline the primary writes on as the health check last read it; {@code 0} before. */
    public int primaryTimeline() {
        return monitor.timeline();
    }

    /** Runs the health check now, on the calling thread. */
    public void checkNow() {
        monitor.checkNow();
    }

    /**
     * Chooses an eligible replica that has replayed at least {@code minimumLsn}.
     *
     * @param excluded a replica to skip (one that just failed), or {@code null}
     * @param whyNot if not {@code null}, receives in element 0 why no replica was eligible
     * @return the replica, or {@code null} when none is eligible
     */
    public ReplicaNode choose(long minimumLsn, ReplicaNode excluded, ReplicaNode.Ineligibility[] whyNot) {
        return selector.choose(minimumLsn, excluded, whyNot);
    }

    /** Whether any replica could serve a read that needs no particular position (up, in recovery, within the lag bounds). */
    public boolean anyEligible() {
        for (ReplicaNode node : nodes) {
            if (node.ineligibility(bounds, Lsn.UNKNOWN) == null) {
                return true;
            }
        }
        return false;
    }

    /** A replica that has replayed {@code required}, asking and waiting up to {@code maxWaitNanos} if needed, or {@code null}. */
    public ReplicaNode await(long required, long maxWaitNanos, ReplicaNode.Ineligibility[] whyNot) {
        return gate.await(required, maxWaitNanos, whyNot);
    }

    /**
     * Whether a replica has replayed {@code position}, asking and waiting up to {@code maxWait} if
     * none is known to; for workers that decide before their handler runs.
     */
    public boolean awaitReplica(long position, Duration maxWait) {
        if (knownToHave(position)) {
            metrics.gate(GateOutcome.KNOWN, 0);
            return true;
        }
        final ReplicaNode node = gate.await(position, maxWait.toNanos(), null);
        // Behind a URL that reaches several servers the gate cannot ask each one: what is known decides.
        return node != null && (!node.severalServers() || knownToHave(position));
    }

    /**
     * Whether some replica is known to have replayed {@code position} and may serve: by what the
     * health check knows of it, or, behind a URL that reaches several servers, of one of them.
     */
    private boolean knownToHave(long position) {
        for (ReplicaNode node : nodes) {
            if (node.ineligibility(bounds, position) != null) {
                continue;
            }
            if (!node.severalServers()) {
                return true;
            }
            for (BackendServer server : node.backendServers()) {
                if (server.ineligibility(bounds, position) == null) {
                    return true;
                }
            }
        }
        return false;
    }

    /** How often a wait for a replica's position asks it again, in nanoseconds. */
    public long lsnPollNanos() {
        return lsnPollNanos;
    }

    /**
     * The server a connection just borrowed from {@code node} reached: behind one URL there can be
     * several ({@link ServerAdmission}).
     *
     * @throws SQLException if the server did not answer
     */
    /** Whether a connection pooler found in front of a replica is trusted to run in session mode ({@code replica_session_pooler}). */
    public void sessionPoolerTrusted(boolean trusted) {
        admission.sessionPoolerTrusted(trusted);
    }

    public BackendServer serverOf(ReplicaNode node, Connection physical) throws SQLException {
        return admission.serverOf(node, physical);
    }

    /**
     * Why {@code server}, which {@code physical} (borrowed from {@code node}) reached, cannot serve a
     * read that needs {@code required}, or {@code null} if it can; asks it, and waits up to
     * {@code maxWaitNanos} for it, where what is known is not enough.
     *
     * @throws SQLException if the server did not answer
     */
    public ReplicaNode.Ineligibility admit(
            ReplicaNode node, BackendServer server, Connection physical, long required, long maxWaitNanos)
            throws SQLException {
        return admission.admit(node, server, physical, required, maxWaitNanos);
    }

    /**
     * A replica that no read may use by what the health check knows of its server (behind the
     * position {@code required}, over the lag bound, not a standby of this primary), but that answers,
     * whose connections were not
     * tried within one health-check interval: behind its URL there may be other servers that can
     * serve. Its next connection is decided by its own server ({@link #admit}). {@code null} if none.
     */
    public ReplicaNode discovering(long required) {
        for (ReplicaNode node : nodes) {
            final ReplicaNode.Ineligibility why = node.ineligibility(bounds, required);
            if (why != null
                    && why != ReplicaNode.Ineligibility.DOWN
                    && why != ReplicaNode.Ineligibility.LAG_UNKNOWN
                    && why != ReplicaNode.Ineligibility.TRANSACTION_POOLER
                    && node.servers().discoveryDue(discoveryIntervalNanos)) {
                return node;
            }
        }
        return null;
    }

    /**
     * Another connection of {@code node}, while the refused ones in {@code held} are held (a
     * data source other than HikariCP gets them back first, and is asked once more only); {@code null}
     * when none can be had without waiting.
     */
    public Connection anotherConnection(ReplicaNode node, List<Connection> held) throws SQLException {
        return ServerAdmission.anotherConnection(node, held);
    }

    /** Returns the connections of {@code held} to their pool. */
    public static void closeAll(List<Connection> held) throws SQLException {
        ServerAdmission.closeAll(held);
    }

    @Override
    public void close() {
        monitor.close();
    }
}
