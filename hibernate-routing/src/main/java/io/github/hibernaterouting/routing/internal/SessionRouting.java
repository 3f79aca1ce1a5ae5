package io.github.hibernaterouting.routing.internal;

import java.lang.ref.WeakReference;
import java.util.HashSet;
import java.util.Set;

import jakarta.persistence.EntityManager;

import org.hibernate.SessionEventListener;
import org.hibernate.engine.spi.EntityKey;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;

/**
 * The routing state of one Hibernate session (a unit of work): whether it wrote, which replica it
 * reads from, and which unversioned entities it loaded from a replica.
 *
 * <p>It outlives the session's physical connections, which Hibernate acquires and releases several
 * times per session: it is added to the session as a {@link SessionEventListener}, so Hibernate
 * tells it when the session acquires a connection and it can hand itself to the connection
 * provider, with no lookup. Confined to the session's thread, like the session itself.
 */
final class SessionRouting implements SessionEventListener {
	private static final long serialVersionUID = 1L;

	/** The session's routing state while Hibernate acquires a connection for it, for the provider. */
	static final ThreadLocal<SessionRouting> ACQUIRING = new ThreadLocal<>();

	final transient RoutingRuntime runtime;
	private final transient WeakReference<SharedSessionContractImplementor> session;
	private boolean escalated;
	private transient ReplicaNode replica;
	private boolean replicaLost;
	private Strategy sessionStrategy;
	private boolean primaryTenant;
	private transient Set<EntityKey> replicaLoaded;
	boolean lastStatementOnReplica;

	SessionRouting(RoutingRuntime runtime, SharedSessionContractImplementor session) {
		this.runtime = runtime;
		this.session = new WeakReference<>( session );
	}

	/**
	 * Re-reads the EntityManager property {@value RoutingSettings#STRATEGY}. Called when a connection
	 * is acquired and when a transaction begins, not per statement, because reading the properties
	 * copies them.
	 */
	void primaryTenant(boolean primaryTenant) {
		this.primaryTenant = primaryTenant;
	}

	void refreshSessionStrategy() {
		final SharedSessionContractImplementor s = session.get();
		if ( s instanceof EntityManager entityManager && entityManager.isOpen() ) {
			sessionStrategy = Strategy.interpret( SessionProperties.get( entityManager, RoutingSettings.STRATEGY ),
					"EntityManager property " + RoutingSettings.STRATEGY );
		}
	}

	@Override
	public void jdbcConnectionAcquisitionStart() {
		ACQUIRING.set( this );
	}

	@Override
	public void jdbcConnectionAcquisitionEnd() {
		// set(null), not remove(): remove() also sweeps the thread's map, on every acquisition.
		ACQUIRING.set( null );
	}

	/**
	 * The routing state of a session that has a routed connection right now (during a load or a
	 * flush it does), else {@code null}.
	 */
	static SessionRouting of(SharedSessionContractImplementor session) {
		final var logicalConnection = session.getJdbcCoordinator().getLogicalConnection();
		if ( logicalConnection.isPhysicallyConnected()
				&& logicalConnection.getPhysicalConnection() instanceof RoutingConnection connection ) {
			return connection.attachedUnit();
		}
		return null;
	}

	/**
	 * The strategy for one statement: query hint, then session property, then the innermost scope
	 * that names one, then the tenant the session was opened for, then the persistence-unit default.
	 */
	Strategy strategy(String hint) {
		if ( hint != null ) {
			return Strategy.interpret( hint, "query hint " + RoutingSettings.STRATEGY );
		}
		if ( sessionStrategy != null ) {
			return sessionStrategy;
		}
		final RoutingScope scope = RoutingScope.current();
		if ( scope != null ) {
			final Strategy scoped = scope.effectiveStrategy();
			if ( scoped != null ) {
				return scoped;
			}
		}
		return primaryTenant ? Strategy.PRIMARY : runtime.config.strategy;
	}

	/** Whether this unit of work, or the scope it runs in, has written. */
	boolean hasWritten() {
		if ( escalated ) {
			return true;
		}
		final RoutingScope scope = RoutingScope.current();
		return scope != null && scope.hasWritten();
	}

	/** Records a write: this unit of work and its scopes read from the primary from now on under READ_AFTER_WRITE. */
	void escalate(RouteReason reason) {
		if ( !escalated ) {
			escalated = true;
			runtime.metrics.escalation( reason );
		}
		final RoutingScope scope = RoutingScope.current();
		if ( scope != null ) {
			scope.markWritten();
		}
	}

	boolean escalated() {
		return escalated;
	}

	/** The replica this unit of work reads from; it keeps one so that its reads never go back in time. */
	ReplicaNode replica() {
		return replica;
	}

	void replica(ReplicaNode node) {
		replica = node;
	}

	/**
	 * Whether this unit of work's replica failed after it had read from it. Another replica might be
	 * behind what was read, so the rest of the unit of work reads from the primary.
	 */
	boolean replicaLost() {
		return replicaLost;
	}

	void loseReplica() {
		replicaLost = replica != null;
		replica = null;
	}

	void loadedFromReplica(EntityKey key) {
		if ( replicaLoaded == null ) {
			replicaLoaded = new HashSet<>();
		}
		replicaLoaded.add( key );
	}

	boolean wasLoadedFromReplica(EntityKey key) {
		return replicaLoaded != null && replicaLoaded.contains( key );
	}

	/** Forgets an entity's replica origin once its state has been verified against, or written to, the primary. */
	void verified(EntityKey key) {
		if ( replicaLoaded != null ) {
			replicaLoaded.remove( key );
		}
	}
}
