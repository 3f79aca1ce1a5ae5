package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.consistency.ActorStamps;
import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.ReachedPositions;
import io.github.hibernaterouting.routing.internal.consistency.ReadYourWritesTracker;
import io.github.hibernaterouting.routing.internal.consistency.RedisMarker;
import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import io.github.hibernaterouting.routing.internal.jdbc.JdbcRouting;
import io.github.hibernaterouting.routing.internal.jdbc.JtaTransactions;
import io.github.hibernaterouting.routing.internal.metrics.DecisionLog;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.BackendServer;
import io.github.hibernaterouting.routing.internal.replicas.CircuitBreaker;
import io.github.hibernaterouting.routing.internal.replicas.LagBounds;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaSet;
import io.github.hibernaterouting.routing.internal.session.ReplicaReadGuard;
import io.github.hibernaterouting.routing.internal.session.WritePolicy;
import io.github.hibernaterouting.routing.sql.FunctionCatalog;
import io.github.hibernaterouting.routing.sql.SqlClassifier;
import io.github.hibernaterouting.routing.sql.internal.Masking;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routing for one persistence unit, assembled from its configuration: the pools, the replicas and
 * their health check, the classifier, the meters and the read-your-writes bookkeeping; and the
 * operations the public API offers on them.
 *
 * <p>Built by {@link RoutingConnectionProvider} when Hibernate starts its services and closed when
 * Hibernate stops them: the health check first, then the replica pools, then the primary's. The
 * parts get what they need from here when they are built; none of them reaches back into this
 * object. Thread-safe.
 */
public final class RoutingRuntime implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RoutingRuntime.class);

    private final ConnectionSources sources;
    private final ReplicaSet replicas;
    private final RoutingMetrics metrics;
    private final ReadYourWritesTracker tracker;
    private final JdbcRouting jdbc;
    private final ReplicaReadGuard guard;
    private final ReachedPositions reached;
    /** Stamps carry read-your-writes across instances, and nothing says the second-level cache does too. */
    private final boolean stampsCrossLocalCaches;

    private RoutingRuntime(RoutingConfig config, ConnectionSources sources, JtaTransactions jta) {
        this.sources = sources;
        final DataSource primaryPool = sources.primary();
        final List<ConnectionSources.Replica> replicaSources = sources.replicas();
        final List<String> names = new ArrayList<>();
        for (int i = 0; i < replicaSources.size(); i++) {
            names.add("replica" + (i + 1));
        }
        final MeterRegistry registry = config.meterRegistry != null ? config.meterRegistry : Metrics.globalRegistry;
        this.metrics = new RoutingMetrics(registry, config.persistenceUnit, names);
        final List<ReplicaNode> nodes = new ArrayList<>();
        for (int i = 0; i < replicaSources.size(); i++) {
            final ConnectionSources.Replica source = replicaSources.get(i);
            nodes.add(new ReplicaNode(
                    i,
                    names.get(i),
                    source.description(),
                    source.dataSource(),
                    source.supplied(),
                    new CircuitBreaker(
                            config.circuitBreakerFailureThreshold,
                            config.circuitBreakerOpenDuration.toNanos(),
                            System::nanoTime),
                    source.probe()));
        }
        final LagBounds bounds = new LagBounds(
                config.checkRecovery,
                config.maxReplicaLagBytes,
                config.maxReplicaLag.toMillis(),
                LagBounds.staleAfter(config.maxReplicaLag.toMillis(), config.healthCheckInterval.toMillis()));
        this.replicas = new ReplicaSet(
                nodes,
                bounds,
                config.loadBalancing,
                sources.primaryProbe(),
                sources.ownPrimaryPool(),
                config.healthCheckInterval,
                config.lsnPollInterval,
                metrics);
        this.replicas.sessionPoolerTrusted(config.replicaSessionPooler);
        final RedisMarker redis = config.redisEnabled()
                ? new RedisMarker(config.redisUri, config.redisPrefix, config.redisWindow, config.redisTimeout, metrics)
                : null;
        final ActorStamps.StampTable table = config.actorStamps == RoutingSettings.ActorStamps.TABLE
                ? new ActorStamps.StampTable(
                        config.actorStampsTable, config.actorStampsKeyColumn, config.actorStampsColumn)
                : null;
        this.tracker = new ReadYourWritesTracker(new ActorStamps(
                config.actorStampsMemoryTtl, config.actorStampsMemoryCapacity, table, redis, primaryPool, metrics));
        final WritePolicy writes = new WritePolicy(tracker);
        this.jdbc = new JdbcRouting(
                new SqlClassifier(catalog(config, primaryPool), config.classifierCacheSize),
                primaryPool,
                replicas,
                config.replicaFailure,
                config.lsnWait.toNanos(),
                config.transactions == RoutingSettings.TransactionMode.PRIMARY,
                config.strategy,
                metrics,
                tracker,
                writes,
                config.connection.isolation == null ? IsolationLevel.UNKNOWN : config.connection.isolation,
                config.connection.autoCommit,
                jta);
        this.guard = new ReplicaReadGuard(writes);
        this.stampsCrossLocalCaches = !config.secondLevelCacheShared
                && (config.redisUri != null || config.actorStamps == RoutingSettings.ActorStamps.TABLE);
        this.reached =
                new ReachedPositions(replicas::primaryPosition, replicas::primaryTimeline, this::currentPosition);
    }

    /**
     * Creates the pools, loads function volatility from the primary, checks every replica once and
     * starts the background health check. A replica that is down does not stop the start: reads skip it.
     */
    static RoutingRuntime start(RoutingConfig config, Function<String, Object> jndi, JtaTransactions jta) {
        final ConnectionSources sources;
        try {
            sources = ConnectionSources.open(config, jndi);
        } catch (RuntimeException e) {
            // HikariCP and the driver quote the URL in their messages, credentials and all.
            throw Masking.exception(e);
        }
        try {
            final RoutingRuntime runtime = new RoutingRuntime(config, sources, jta);
            runtime.replicas.start();
            LOG.info("hibernate-routing started: {}", config);
            return runtime;
        } catch (RuntimeException e) {
            sources.close();
            throw Masking.exception(e);
        }
    }

    private static FunctionCatalog catalog(RoutingConfig config, DataSource primary) {
        if (!config.loadCatalog) {
            return FunctionCatalog.NONE;
        }
        try (Connection connection = primary.getConnection()) {
            return FunctionCatalog.load(connection);
        } catch (SQLException e) {
            LOG.warn(
                    "Could not load function volatility from the primary ({}); calls of functions the library "
                            + "does not know go to the primary",
                    e.getMessage());
            return FunctionCatalog.NONE;
        }
    }

    /** Makes the routed connections. */
    JdbcRouting jdbc() {
        return jdbc;
    }

    /** The flush-time listeners. */
    /** Whether read-your-writes crosses instances while the second-level cache may be local to each. */
    boolean stampsCrossLocalCaches() {
        return stampsCrossLocalCaches;
    }

    ReplicaReadGuard guard() {
        return guard;
    }

    /** Where connections to the primary come from, for schema tools and metadata. */
    DataSource primaryPool() {
        return sources.primary();
    }

    /** The replicas, in configuration order. */
    public List<ReplicaNode> replicas() {
        return replicas.nodes();
    }

    /** The meters. */
    public RoutingMetrics metrics() {
        return metrics;
    }

    /** Runs the health check now (tests and the LSN gate use it to avoid waiting for the next tick). */
    public void checkReplicasNow() {
        replicas.checkNow();
    }

    /** The current WAL position of the primary, for publishers to stamp messages with. */
    public long currentPosition() throws SQLException {
        try (Connection connection = sources.primary().getConnection()) {
            return WalPositions.insertPosition(connection);
        }
    }

    /**
     * Whether the primary has reached {@code position}: compared with the highest position known here,
     * asking the primary once only for a position ahead of it; never asks a replica.
     */
    public boolean primaryReached(long position) throws SQLException {
        return reached.reached(position);
    }

    /** The stamp of {@code actor} as the primary (or this instance's memory) knows it. */
    public long stampOf(String actor) throws SQLException {
        return tracker.stampOf(actor);
    }

    /**
     * Stores {@code actor}'s pending-mutation marker.
     *
     * @throws io.github.hibernaterouting.routing.ConsistencyMarkerException if Redis cannot be reached
     */
    public void beforeMutation(String actor) {
        tracker.beforeMutation(actor);
    }

    /** The current scope's mutation ended: see {@link ReadYourWritesTracker#mutationEnded}. */
    public void mutationEnded() {
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null) {
            tracker.mutationEnded(scope);
        }
    }

    /**
     * Whether a replica has replayed {@code position}, asking and waiting up to {@code maxWait} if
     * none is known to; for workers that decide before their handler runs.
     */
    public boolean awaitReplica(long position, Duration maxWait) {
        return replicas.awaitReplica(position, maxWait);
    }

    /** Receives one node's figures; see {@code RoutingStatus.Node}. */
    @FunctionalInterface
    public interface NodeVisitor {
        void visit(
                String name,
                boolean primary,
                boolean up,
                long lagBytes,
                double lagSeconds,
                long reads,
                long writes,
                int activeConnections,
                int idleConnections,
                int maximumConnections,
                String problem);
    }

    /** Receives one recorded decision; see {@code RoutingStatus.Decision}. */
    @FunctionalInterface
    public interface DecisionVisitor {
        void visit(long epochMillis, String node, String reason);
    }

    /** Visits the primary, then each replica. */
    public void forEachNode(NodeVisitor visitor) {
        final int[] primary = ConnectionSources.poolFigures(sources.primary());
        visitor.visit(
                "primary",
                true,
                true,
                0,
                0.0,
                metrics.statements(RoutingMetrics.PRIMARY, false),
                metrics.statements(RoutingMetrics.PRIMARY, true),
                primary == null ? 0 : primary[0],
                primary == null ? 0 : primary[1],
                primary == null ? -1 : primary[2],
                null);
        for (ReplicaNode node : replicas.nodes()) {
            final int[] pool = ConnectionSources.poolFigures(node.connections());
            visitor.visit(
                    node.name(),
                    false,
                    node.isUp(),
                    node.lagBytes(),
                    node.lagSeconds(),
                    metrics.statements(node.metricsNode(), false),
                    0,
                    pool == null ? 0 : pool[0],
                    pool == null ? 0 : pool[1],
                    pool == null ? -1 : pool[2],
                    node.problem());
        }
    }

    /** Receives one server behind a replica ({@link #forEachServer}). */
    @FunctionalInterface
    public interface ServerVisitor {
        void visit(
                String node,
                String address,
                int port,
                boolean inRecovery,
                long lagBytes,
                double lagSeconds,
                String problem);
    }

    /** Visits the servers behind each replica, replica by replica, by address and port. */
    public void forEachServer(ServerVisitor visitor) {
        for (ReplicaNode node : replicas.nodes()) {
            for (BackendServer server : node.backendServers()) {
                visitor.visit(
                        node.name(),
                        server.address(),
                        server.port(),
                        server.inRecovery(),
                        server.lagBytes(),
                        server.lagSeconds(),
                        server.problem());
            }
        }
    }

    /** Visits the latest decisions, newest first. */
    public void forEachDecision(DecisionVisitor visitor) {
        for (DecisionLog.Entry entry : metrics.decisions().newestFirst()) {
            visitor.visit(entry.epochMillis(), metrics.nodeName(entry.node()), entry.reason().tag);
        }
    }

    /** The routing runtime behind a persistence unit, or {@code null} when routing is off there. */
    public static RoutingRuntime of(EntityManagerFactory emf) {
        final MultiTenantConnectionProvider<?> provider = emf.unwrap(SessionFactoryImplementor.class)
                .getServiceRegistry()
                .getService(MultiTenantConnectionProvider.class);
        return provider instanceof RoutingConnectionProvider routing ? routing.runtime() : null;
    }

    @Override
    public void close() {
        replicas.close();
        tracker.close();
        metrics.close();
        sources.close();
    }
}
