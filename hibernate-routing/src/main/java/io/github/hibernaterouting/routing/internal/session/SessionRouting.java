package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.BackendServer;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.routing.sql.Classification;
import jakarta.persistence.EntityManager;
import java.lang.ref.WeakReference;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.function.Supplier;
import org.hibernate.collection.spi.PersistentCollection;
import org.hibernate.engine.spi.EntityKey;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.engine.spi.StatelessSessionImplementor;

/**
 * The routing state of one Hibernate session (a unit of work): whether it wrote, which replica it
 * reads from, how far along a replica must be for it (after a read fell back to the primary), and
 * which unversioned entities and collections it loaded from a replica.
 *
 * <p>It outlives the session's physical connections, which Hibernate acquires and releases several
 * times per session; each routed connection of the session is bound to it. Confined to the
 * session's thread, like the session itself.
 */
public final class SessionRouting {
    private final Strategy unitDefault;
    private final RoutingMetrics metrics;
    private final WeakReference<SharedSessionContractImplementor> session;
    private boolean escalated;
    private ReplicaNode replica;
    private boolean replicaLost;
    /** Why the replica was lost: a failure, or falling behind what the unit of work needs. */
    private RouteReason replicaLostReason = RouteReason.REPLICA_DOWN;
    /** This unit of work has waited in the LSN gate once: it does not wait again. */
    private boolean lsnWaited;

    private Strategy sessionStrategy;
    private boolean primaryTenant;
    private Set<EntityKey> replicaLoaded;
    /** Collections initialized from a replica, by identity: their equality would read their elements. */
    private Set<PersistentCollection<?>> replicaCollections;

    private boolean lastStatementOnReplica;
    /** The unit's read floor, and its routing scope's: see {@link #readOnPrimary()}. */
    private final ReadFloor readFloor = new ReadFloor();
    /** See {@link #replicaServer()}. */
    private BackendServer replicaServer;
    /** How many {@link #onPrimary} calls are running: while above 0, every read of the unit goes to the primary. */
    private int primaryReads;
    /** What a stateless session read; {@code null} for a stateful one, whose loads are recorded instead. */
    private final StatelessUnitReads statelessReads;
    /** The unit changed {@code standard_conforming_strings}: see {@link #sessionStateChanged}. */
    private boolean lexerStateChanged;
    /** The unit changed {@code search_path}: see {@link #sessionStateChanged}. */
    private boolean searchPathChanged;
    /** The unit may have created a temporary object on the primary: see {@link #aboutToWrite}. */
    private boolean temporaryObjects;

    /**
     * @param unitDefault the persistence-unit default strategy
     * @param session the session, or {@code null} for a connection used without one
     * @param scopeReads what the stateless sessions of the persistence unit read on replicas, per routing scope
     */
    public SessionRouting(
            Strategy unitDefault,
            RoutingMetrics metrics,
            SharedSessionContractImplementor session,
            StatelessScopeReads scopeReads) {
        this.unitDefault = unitDefault;
        this.metrics = metrics;
        this.session = new WeakReference<>(session);
        // Not isEventSource(): a session asks its transaction coordinator for that, which it has not
        // built yet while it acquires its connection in its constructor (IMMEDIATE_ACQUISITION_AND_HOLD).
        this.statelessReads =
                session instanceof StatelessSessionImplementor ? new StatelessUnitReads(scopeReads) : null;
    }

    /**
     * Whether the unit is a {@code StatelessSession}: it keeps no loaded state, so its read-write
     * transactions run on the primary under {@code READ_AFTER_WRITE}, and its writes of unversioned
     * entities are refused after replica reads of their tables ({@link ReplicaReadGuard}).
     */
    public boolean stateless() {
        return statelessReads != null;
    }

    /** What this stateless unit read, on replicas and on the primary; {@code null} for a stateful one. */
    public StatelessUnitReads statelessReads() {
        return statelessReads;
    }

    /** The routing state of a session that has a routed connection right now (during a load or a flush it does), else {@code null}. */
    public static SessionRouting of(SharedSessionContractImplementor session) {
        final var logicalConnection = session.getJdbcCoordinator().getLogicalConnection();
        if (logicalConnection.isPhysicallyConnected()
                && logicalConnection.getPhysicalConnection() instanceof Routed connection) {
            return connection.sessionRouting();
        }
        return null;
    }

    /**
     * The routing state of a session whose routed connection may be reading replica data right now
     * (see {@link Routed#mayBeReadingReplicaData()}): what a load is reading came from a replica.
     * {@code null} when it did not, or when the session has no routed connection (what it loads then
     * comes from a cache, which only the primary fills).
     */
    static SessionRouting readingReplica(SharedSessionContractImplementor session) {
        final var logicalConnection = session.getJdbcCoordinator().getLogicalConnection();
        if (logicalConnection.isPhysicallyConnected()
                && logicalConnection.getPhysicalConnection() instanceof Routed connection
                && connection.mayBeReadingReplicaData()) {
            return connection.sessionRouting();
        }
        return null;
    }

    /** A connection bound to a session's routing state. */
    public interface Routed {
        /** The session's routing state, or {@code null} if the connection was not acquired through a session. */
        SessionRouting sessionRouting();

        /**
         * Whether what the session is reading through this connection right now may come from a
         * replica: a statement that ran on a replica is still open (Hibernate processes, and caches,
         * the rows of a statement before it closes it, while nested loads run other statements), or
         * the last statement ran on a replica.
         */
        boolean mayBeReadingReplicaData();
    }

    /** Whether the session was opened with the {@code "primary"} connection identifier. */
    public void primaryTenant(boolean primaryTenant) {
        this.primaryTenant = primaryTenant;
    }

    /**
     * Re-reads the EntityManager property {@value RoutingSettings#STRATEGY}. Called when a connection
     * is acquired and when a transaction begins, not per statement, because reading the properties
     * copies them.
     */
    public void refreshSessionStrategy() {
        final SharedSessionContractImplementor s = session.get();
        // Not isOpen(), which asks the transaction coordinator; see the constructor.
        if (s instanceof EntityManager entityManager && !s.isClosed()) {
            sessionStrategy = Strategy.interpret(
                    SessionProperties.get(entityManager, RoutingSettings.STRATEGY),
                    "EntityManager property " + RoutingSettings.STRATEGY);
        }
    }

    /** The strategy for one statement, given its query hint (or {@code null}); see {@link StrategyResolver}. */
    public Strategy strategy(String hint) {
        return StrategyResolver.resolve(
                hint == null ? null : Strategy.interpret(hint, "query hint " + RoutingSettings.STRATEGY),
                sessionStrategy,
                ScopeFrame.current(),
                primaryTenant,
                unitDefault);
    }

    /**
     * Whether this unit of work has written, or a write is known in the scope it runs in (one made in
     * it, in a scope nested in it, or in an enclosing scope; see {@link ScopeFrame#writeKnown()}).
     */
    public boolean hasWritten() {
        if (escalated) {
            return true;
        }
        final ScopeFrame scope = ScopeFrame.current();
        return scope != null && scope.writeKnown();
    }

    /** Records a write: this unit of work and its scopes read from the primary from now on under READ_AFTER_WRITE. */
    void escalate(RouteReason reason) {
        if (!escalated) {
            escalated = true;
            metrics.escalation(reason);
        }
        final ScopeFrame scope = ScopeFrame.current();
        if (scope != null) {
            scope.markWritten();
        }
    }

    public boolean escalated() {
        return escalated;
    }

    /** The replica this unit of work reads from; it keeps one so that its reads never go back in time. */
    public ReplicaNode replica() {
        return replica;
    }

    /** The unit binds {@code node} for a read; the later units of its routing scope prefer it ({@link ReadFloor}). */
    public void replica(ReplicaNode node) {
        replica = node;
        ReadFloor.replicaUsed(node);
    }

    /**
     * The server behind its replica that this unit of work's last replica connection reached
     * (behind one URL there can be several); {@code null} before its first replica read.
     */
    public BackendServer replicaServer() {
        return replicaServer;
    }

    public void replicaServer(BackendServer server) {
        replicaServer = server;
    }

    /**
     * Whether this unit of work's replica failed after it had read from it. Another replica might be
     * behind what was read, so the rest of the unit of work reads from the primary.
     */
    public boolean replicaLost() {
        return replicaLost;
    }

    public void loseReplica() {
        loseReplica(RouteReason.REPLICA_DOWN);
    }

    /** {@link #loseReplica()}, saying why: the reason later reads that go to the primary count. */
    public void loseReplica(RouteReason why) {
        replicaLost = replica != null;
        replicaLostReason = why;
        replica = null;
    }

    /** Why this unit of work lost its replica ({@link #replicaLost()}). */
    public RouteReason replicaLostReason() {
        return replicaLostReason;
    }

    /**
     * Whether this unit of work already waited in the LSN gate: it waits at most once, so that a
     * position no replica reaches costs it one wait, not one per statement.
     */
    public boolean lsnWaited() {
        return lsnWaited;
    }

    public void lsnWaited(boolean waited) {
        lsnWaited = waited;
    }

    /**
     * A read of this unit of work ran on the primary, for whatever reason: a fallback (gate timeout,
     * pending marker, replica failure, lag bound), the strategy ({@code PRIMARY} by scope, hint or
     * EntityManager property), a transaction the primary runs ({@code transactions=PRIMARY}, an
     * isolation level a replica cannot give). The primary may have returned data
     * no replica has yet: before the unit reads from a replica again, the primary's position must be
     * taken ({@link #readFloor(long)}) and the replica must have replayed it, so that its reads never go
     * back in time. Inside a routing scope, the same holds for the scope's later units ({@link ReadFloor}).
     */
    public void readOnPrimary() {
        readFloor.readOnPrimary();
    }

    /**
     * A second-level, natural-id or query cache served this unit of work an entry: like a read on the
     * primary, it may be newer than any replica (see {@link #readOnPrimary()}).
     */
    public void readFromCache() {
        readFloor.readOnPrimary();
    }

    /** Whether a read of this unit or of its routing scope ran on the primary, or a cache served one, since the floor was taken. */
    public boolean readFloorStale() {
        return readFloor.stale();
    }

    /** The position a replica must have replayed to serve this unit of work (or its scope); {@link Lsn#UNKNOWN} if none. */
    public long readFloor() {
        return readFloor.position();
    }

    /** Records the primary's position, taken after every read this unit (and its scope) made there. */
    public void readFloor(long position) {
        readFloor.taken(position);
    }

    /**
     * Runs {@code work} with every statement of this unit of work on the primary, whatever the
     * strategy: for the lost-update check, which must compare what was read on a replica with the
     * primary's current data, in the unit's transaction. Statements after {@code work} are routed as
     * before, also when it throws.
     */
    <T> T onPrimary(Supplier<T> work) {
        primaryReads++;
        try {
            return work.get();
        } finally {
            primaryReads--;
        }
    }

    /**
     * A setting statement of this unit is about to run. After {@code SET}/{@code RESET
     * standard_conforming_strings} or {@code RESET ALL}, the classifier's lexer (which assumes the
     * setting is on) may misread the unit's SQL, so the unit keeps off replicas from this statement on,
     * this one included, so that no replica connection takes the setting. After a change of
     * {@code search_path}, reads whose effect depends on it ({@code current_schema()} creates the
     * temporary schema when {@code pg_temp} comes first) run on the primary.
     */
    public void sessionStateChanged(Classification setting) {
        final String parameter = setting.detail();
        if (parameter == null || "all".equals(parameter) || "standard_conforming_strings".equals(parameter)) {
            lexerStateChanged = true;
        }
        if (parameter == null || "all".equals(parameter) || "search_path".equals(parameter)) {
            searchPathChanged = true;
        }
    }

    /** Whether {@code statement} must not run on a replica because of {@link #sessionStateChanged}. */
    boolean replicasRuledOut(Classification statement) {
        return lexerStateChanged || searchPathChanged && statement.dependsOnSearchPath();
    }

    /**
     * A statement that is not read-only is about to run on the primary for this unit. If it may
     * create a temporary object ({@link Classification#createsTemporaryObject()}; any {@code CREATE}
     * or {@code SELECT … INTO} once the unit changed {@code search_path}, which may have put
     * {@code pg_temp} first; a {@code DO} block or a {@code CALL}), every later read of the unit needs
     * the primary: the object exists only there, and on a replica its name means a permanent table of
     * the same name, or nothing. For as long as the unit lives: PostgreSQL drops the object at the end
     * of the transaction ({@code ON COMMIT DROP}) or of the connection, neither of which the unit sees
     * for certain.
     */
    public void aboutToWrite(Classification statement) {
        if (temporaryObjects) {
            return;
        }
        temporaryObjects = switch (statement.reason()) {
            case DO_BLOCK, CALL -> true;
            case DDL, SELECT_INTO, MULTIPLE_STATEMENTS -> statement.createsTemporaryObject() || searchPathChanged;
            default -> statement.createsTemporaryObject();
        };
    }

    /**
     * Plain JDBC whose SQL is not known before it runs (a {@code Statement}, a {@code CallableStatement},
     * the driver's own API) is about to run on the primary: it may create a temporary object, see
     * {@link #aboutToWrite}.
     */
    public void aboutToRunUnknownSql() {
        temporaryObjects = true;
    }

    /** Whether this unit may have created a temporary object: its reads need the primary ({@link #aboutToWrite}). */
    public boolean temporaryObjects() {
        return temporaryObjects;
    }

    /** Whether the unit's reads must go to the primary right now (see {@link #onPrimary}). */
    boolean readsOnPrimary() {
        return primaryReads > 0;
    }

    /** Whether the statement that ran last went to a replica: what a load just read came from there. */
    public boolean lastStatementOnReplica() {
        return lastStatementOnReplica;
    }

    public void lastStatementOnReplica(boolean onReplica) {
        lastStatementOnReplica = onReplica;
    }

    void loadedFromReplica(EntityKey key) {
        if (replicaLoaded == null) {
            replicaLoaded = new HashSet<>();
        }
        replicaLoaded.add(key);
    }

    boolean wasLoadedFromReplica(EntityKey key) {
        return replicaLoaded != null && replicaLoaded.contains(key);
    }

    void collectionLoadedFromReplica(PersistentCollection<?> collection) {
        if (replicaCollections == null) {
            replicaCollections = Collections.newSetFromMap(new IdentityHashMap<>());
        }
        replicaCollections.add(collection);
    }

    boolean wasCollectionLoadedFromReplica(PersistentCollection<?> collection) {
        return replicaCollections != null && replicaCollections.contains(collection);
    }

    /** Forgets a collection's replica origin once its elements were verified against the primary. */
    void collectionVerified(PersistentCollection<?> collection) {
        if (replicaCollections != null) {
            replicaCollections.remove(collection);
        }
    }

    /** Forgets an entity's replica origin once its state has been verified against, or written to, the primary. */
    void verified(EntityKey key) {
        if (replicaLoaded != null) {
            replicaLoaded.remove(key);
        }
    }
}
