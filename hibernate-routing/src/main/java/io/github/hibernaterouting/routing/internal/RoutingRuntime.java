package io.github.hibernaterouting.routing.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import jakarta.persistence.EntityManagerFactory;

import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;

import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.sql.FunctionCatalog;
import io.github.hibernaterouting.routing.sql.SqlClassifier;

/**
 * Everything routing needs for one persistence unit: the pools, the replicas and their monitor, the
 * classifier, the meters, and the routing state of each open session.
 *
 * <p>Thread-safe. Built by {@link RoutingConnectionProvider} when Hibernate starts its services and
 * closed when Hibernate stops them: the monitor first, then the replica pools, then the primary's.
 */
public final class RoutingRuntime implements AutoCloseable {
	private static final Logger LOG = LoggerFactory.getLogger( RoutingRuntime.class );

	final RoutingConfig config;
	final HikariDataSource primaryPool;
	final List<ReplicaNode> replicas;
	final ReplicaSelector selector;
	final ReplicaMonitor monitor;
	final SqlClassifier classifier;
	final RoutingMetrics metrics;
	final ActorStamps stamps;
	final LsnGate gate;

	private RoutingRuntime(RoutingConfig config, HikariDataSource primaryPool, List<ReplicaNode> replicas, SqlClassifier classifier) {
		this.config = config;
		this.primaryPool = primaryPool;
		this.replicas = List.copyOf( replicas );
		this.selector = new ReplicaSelector( this.replicas, config );
		this.monitor = new ReplicaMonitor( primaryPool, this.replicas, config );
		this.classifier = classifier;
		this.metrics = new RoutingMetrics( config.meterRegistry, config.persistenceUnit, this.replicas );
		this.stamps = new ActorStamps( config, primaryPool, metrics );
		this.gate = new LsnGate( config, this.replicas, selector, metrics );
	}

	/**
	 * Creates the pools, loads function volatility from the primary, checks every replica once and
	 * starts the background monitor. A replica that is down does not stop the start: reads skip it.
	 */
	static RoutingRuntime start(RoutingConfig config) {
		final HikariDataSource primary = new HikariDataSource( poolConfig( "hibernate-routing-primary", config.primaryUrl,
				config.primaryUser, config.primaryPassword, config.primaryPool, false ) );
		final List<ReplicaNode> replicas = new ArrayList<>();
		try {
			for ( int i = 0; i < config.replicaUrls.size(); i++ ) {
				final String name = "replica" + ( i + 1 );
				final String url = config.replicaUrls.get( i );
				final HikariDataSource pool = new HikariDataSource( poolConfig( "hibernate-routing-" + name, url,
						config.replicaUser, config.replicaPassword, config.replicaPool, true ) );
				replicas.add( new ReplicaNode( i, name, Masking.url( url ), pool, new CircuitBreaker(
						config.circuitBreakerFailureThreshold, config.circuitBreakerOpenDuration.toNanos(), System::nanoTime ) ) );
			}
			final RoutingRuntime runtime = new RoutingRuntime( config, primary, replicas, new SqlClassifier( catalog( config, primary ), config.classifierCacheSize ) );
			runtime.monitor.start();
			LOG.info( "hibernate-routing started: {}", config );
			return runtime;
		}
		catch (RuntimeException e) {
			replicas.forEach( node -> node.pool.close() );
			primary.close();
			throw e;
		}
	}

	private static FunctionCatalog catalog(RoutingConfig config, HikariDataSource primary) {
		if ( !config.loadCatalog ) {
			return FunctionCatalog.NONE;
		}
		try (Connection connection = primary.getConnection()) {
			return FunctionCatalog.load( connection );
		}
		catch (SQLException e) {
			LOG.warn( "Could not load function volatility from the primary ({}); calls of functions the library "
					+ "does not know go to the primary", e.getMessage() );
			return FunctionCatalog.NONE;
		}
	}

	/** Run once on every new replica connection. */
	static final String READ_ONLY_SESSION = "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY";

	private static HikariConfig poolConfig(String name, String url, String user, String password,
			RoutingConfig.PoolConfig pool, boolean replica) {
		final HikariConfig hikari = new HikariConfig();
		hikari.setPoolName( name );
		hikari.setJdbcUrl( url );
		hikari.setUsername( user );
		hikari.setPassword( password );
		hikari.setMaximumPoolSize( pool.maximumPoolSize() );
		hikari.setMinimumIdle( pool.minimumIdle() );
		hikari.setConnectionTimeout( pool.connectionTimeout().toMillis() );
		if ( replica ) {
			// Defence in depth: even a routing bug cannot write through a replica connection, in
			// auto-commit mode or in a transaction. The session default is set once per physical
			// connection; pgjdbc's readOnlyMode=always would instead send a SET SESSION CHARACTERISTICS
			// round trip at every auto-commit switch, twice per transaction.
			hikari.setReadOnly( true );
			hikari.setConnectionInitSql( READ_ONLY_SESSION );
			// A replica that is down at startup must not stop the application: the failure policy applies.
			hikari.setInitializationFailTimeout( -1 );
		}
		return hikari;
	}

	/**
	 * The routing state of {@code session}, which has just acquired its first routed connection:
	 * created now and added to the session as an event listener, which hands it to every later
	 * connection of the session.
	 */
	SessionRouting newSessionRouting(SharedSessionContractImplementor session) {
		final SessionRouting unit = new SessionRouting( this, session );
		session.getEventListenerManager().addListener( unit );
		return unit;
	}

	/** The configuration this runtime was built from. */
	public RoutingConfig config() {
		return config;
	}

	/** The replicas, in configuration order. */
	public List<ReplicaNode> replicas() {
		return replicas;
	}

	/** The meters. */
	public RoutingMetrics metrics() {
		return metrics;
	}

	/** Runs the health check now (tests and the LSN gate use it to avoid waiting for the next tick). */
	public void checkReplicasNow() {
		monitor.checkNow();
	}

	/** The primary's current WAL insert position: never behind any commit that has returned. */
	long primaryPosition() throws SQLException {
		try (Connection connection = primaryPool.getConnection()) {
			return insertPosition( connection );
		}
	}

	/**
	 * The WAL insert position on {@code connection}. Insert, not write ({@code pg_current_wal_lsn()}):
	 * with {@code synchronous_commit=off} a commit returns before its record is written, and the
	 * insert position covers it even then.
	 */
	static long insertPosition(Connection connection) throws SQLException {
		try (var statement = connection.createStatement();
				var rs = statement.executeQuery( "select pg_current_wal_insert_lsn()::text" )) {
			rs.next();
			return Lsn.parse( rs.getString( 1 ) );
		}
	}

	/**
	 * Before the first write of the current scope's actor: stores the shared mutation marker, once
	 * per scope, so that other instances send the actor's reads to the primary until it commits.
	 *
	 * @throws ConsistencyMarkerException if the marker cannot be stored; nothing was written
	 */
	void beforeWrite() {
		if ( !stamps.redisEnabled() ) {
			return;
		}
		final RoutingScope scope = RoutingScope.current();
		final String actor = scope == null ? null : scope.actor();
		if ( actor == null || ScopeAccess.get().marked( scope, this ) ) {
			return;
		}
		beforeMutation( actor );
	}

	/**
	 * Stores {@code actor}'s pending-mutation marker.
	 *
	 * @throws ConsistencyMarkerException if Redis cannot be reached
	 */
	public void beforeMutation(String actor) {
		try {
			stamps.beforeMutation( actor );
		}
		catch (RedisMarker.Unavailable e) {
			throw new ConsistencyMarkerException( e.getMessage(), e );
		}
		// Called from outside (the servlet filter) inside the actor's scope: the first write need not store it again.
		final RoutingScope scope = RoutingScope.current();
		if ( scope != null && actor.equals( scope.actor() ) ) {
			ScopeAccess.get().setMarked( scope, this );
		}
	}

	/** Records a committed write: in the current scopes (for the response token) and in the actor's stamp. */
	void afterCommit(long lsn) {
		final RoutingScope scope = RoutingScope.current();
		if ( scope == null ) {
			return;
		}
		final ScopeAccess access = ScopeAccess.get();
		access.recordCommit( scope, ConsistencyToken.ofPosition( lsn ) );
		access.forgetResolved( scope );
		final String actor = scope.actor();
		if ( actor != null ) {
			stamps.advance( actor, lsn );
		}
	}

	/**
	 * A write committed but its position could not be read: the scope counts as written and the
	 * actor's reads on this instance go to the primary until its stamp expires from memory.
	 */
	void commitPositionUnknown() {
		final RoutingScope scope = RoutingScope.current();
		if ( scope == null ) {
			return;
		}
		scope.markWritten();
		ScopeAccess.get().forgetResolved( scope );
		final String actor = scope.actor();
		if ( actor != null ) {
			stamps.primaryOnly( actor );
		}
	}

	/**
	 * The WAL position reads in the current scope must reflect: the scope's minimum and its actor's
	 * stamp, {@link Lsn#UNKNOWN} if there is none, {@link ActorStamps#PRIMARY_ONLY} while the actor has
	 * a mutation pending. The actor is looked up once per scope.
	 */
	long requiredPosition() {
		final RoutingScope scope = RoutingScope.current();
		if ( scope == null ) {
			return Lsn.UNKNOWN;
		}
		final ConsistencyToken minimum = scope.minimum();
		long required = minimum == null ? Lsn.UNKNOWN : minimum.position();
		final String actor = scope.actor();
		if ( actor != null ) {
			final long stamp = ScopeAccess.get().resolved( scope, this, () -> stamps.minimumFor( actor ) );
			if ( stamp == ActorStamps.PRIMARY_ONLY ) {
				return ActorStamps.PRIMARY_ONLY;
			}
			required = Lsn.max( required, stamp );
		}
		return required;
	}

	/**
	 * Whether a replica has replayed {@code position}, asking and waiting up to {@code maxWait} if
	 * none is known to; for workers that decide before their handler runs.
	 */
	public boolean awaitReplica(long position, java.time.Duration maxWait) {
		if ( selector.choose( position, null, null ) != null ) {
			metrics.gate( LsnGate.Outcome.KNOWN, 0 );
			return true;
		}
		return gate.await( position, maxWait.toNanos(), null ) != null;
	}

	/** The stamp of {@code actor} as the primary (or this instance's memory) knows it. */
	public long stampOf(String actor) throws SQLException {
		return stamps.readFromPrimary( actor );
	}

	/** The current WAL position of the primary, for publishers to stamp messages with. */
	public long currentPosition() throws SQLException {
		return primaryPosition();
	}

	/** Receives one node's figures; see {@code RoutingStatus.Node}. */
	@FunctionalInterface
	public interface NodeVisitor {
		void visit(String name, boolean primary, boolean up, long lagBytes, double lagSeconds, long reads, long writes,
				int activeConnections, int idleConnections, int maximumConnections);
	}

	/** Receives one recorded decision; see {@code RoutingStatus.Decision}. */
	@FunctionalInterface
	public interface DecisionVisitor {
		void visit(long epochMillis, String node, String reason);
	}

	/** Visits the primary, then each replica. */
	public void forEachNode(NodeVisitor visitor) {
		final HikariPoolMXBean primaryConnections = primaryPool.getHikariPoolMXBean();
		visitor.visit( "primary", true, true, 0, 0.0, metrics.statements( null, false ), metrics.statements( null, true ),
				primaryConnections == null ? 0 : primaryConnections.getActiveConnections(),
				primaryConnections == null ? 0 : primaryConnections.getIdleConnections(), primaryPool.getMaximumPoolSize() );
		for ( ReplicaNode node : replicas ) {
			final HikariPoolMXBean connections = node.pool.getHikariPoolMXBean();
			visitor.visit( node.name, false, node.isUp(), node.lagBytes, node.lagSeconds, metrics.statements( node, false ), 0,
					connections == null ? 0 : connections.getActiveConnections(),
					connections == null ? 0 : connections.getIdleConnections(), node.pool.getMaximumPoolSize() );
		}
	}

	/** Visits the latest decisions, newest first. */
	public void forEachDecision(DecisionVisitor visitor) {
		for ( DecisionLog.Entry entry : metrics.decisions.newestFirst() ) {
			visitor.visit( entry.epochMillis(), metrics.nodeName( entry.node() ), entry.reason().tag );
		}
	}

	/** The routing runtime behind a persistence unit, or {@code null} when routing is off there. */
	public static RoutingRuntime of(EntityManagerFactory emf) {
		final MultiTenantConnectionProvider<?> provider = emf.unwrap( SessionFactoryImplementor.class ).getServiceRegistry()
				.getService( MultiTenantConnectionProvider.class );
		return provider instanceof RoutingConnectionProvider routing ? routing.runtime() : null;
	}

	@Override
	public void close() {
		monitor.close();
		stamps.close();
		metrics.close();
		// Replicas first: an in-flight read must not fall back to a primary pool that is already closed.
		for ( ReplicaNode node : replicas ) {
			closeQuietly( node.pool );
		}
		closeQuietly( primaryPool );
	}

	private static void closeQuietly(HikariDataSource pool) {
		try {
			pool.close();
		}
		catch (RuntimeException e) {
			LOG.warn( "Closing pool {} failed", pool.getPoolName(), e );
		}
	}
}
