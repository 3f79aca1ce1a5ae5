package io.github.hibernaterouting.routing.internal;

import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Struct;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executor;

import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.github.hibernaterouting.routing.ReplicaWriteException;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingSettings.ReplicaFailure;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.Classification.SettingScope;

/**
 * The connection a Hibernate session gets: it binds physical connections lazily, statement by
 * statement, to the primary or to a replica.
 *
 * <p>Every SQL string reaches the database through here, Hibernate's own and raw JDBC in
 * {@code doWork} alike, so this is where each statement is classified and routed, before it
 * reaches any server. Inside a transaction the first write moves the transaction to the primary
 * (see {@link #replicaTransactionNeeded} for how its reads ran on the replica); from then on the
 * whole transaction stays on the primary. {@code SET} and {@code RESET} statements are carried
 * over to every physical connection the unit of work uses (see {@link #settingRan}). Statements
 * are never re-run elsewhere: a failure surfaces.
 *
 * <p>Not thread-safe, like the session that uses it.
 */
final class RoutingConnection implements Connection {
	private static final Logger LOG = LoggerFactory.getLogger( RoutingConnection.class );

	/**
	 * Hands a session's first connection from {@code getConnection} to the event monitor, which
	 * names the session; later connections get the session's state from {@link SessionRouting#ACQUIRING}.
	 */
	static final ThreadLocal<RoutingConnection> AWAITING_SESSION = new ThreadLocal<>();

	private final RoutingRuntime runtime;
	private final boolean primaryTenant;
	private final boolean readOnlySession;
	private SessionRouting unit;
	/** The session property was read since the last statement: a transaction begun now need not read it again. */
	private boolean strategyFresh;

	private Connection primary;
	private Connection replica;
	private ReplicaNode replicaNode;
	/**
	 * The replica connection runs a transaction of its own (auto-commit off). {@code false} while a
	 * read-write transaction's reads run there statement by statement; see {@link #replicaTransactionNeeded}.
	 */
	private boolean replicaTransaction;
	private Connection last;

	private boolean autoCommit = true;
	/** A write ran in the current transaction: capture the commit's WAL position after it commits. */
	private boolean wroteInTransaction;
	/** A write ran in auto-commit mode: capture the position before the primary connection is released. */
	private boolean wroteInAutoCommit;
	private boolean readOnly;
	private Integer isolation;
	private String schema;
	private boolean closed;

	/** A {@code SET} or {@code RESET} that ran, and which bound physical connections have it. */
	private static final class CarriedSetting {
		final String sql;
		/** The parameter it sets, null if unknown (a script). */
		final String name;
		final boolean untilTransactionEnds;
		/** Ran inside the current transaction: a rollback undoes it, as PostgreSQL undoes a {@code SET}. */
		boolean inTransaction;
		boolean onPrimary;
		boolean onReplica;

		CarriedSetting(String sql, String name, boolean untilTransactionEnds) {
			this.sql = sql;
			this.name = name;
			this.untilTransactionEnds = untilTransactionEnds;
		}

		/** Whether {@code newer} sets the same parameter in the same way, so that it replaces this one. */
		boolean replacedBy(CarriedSetting newer) {
			return name != null && name.equals( newer.name ) && untilTransactionEnds == newer.untilTransactionEnds
					&& inTransaction == newer.inTransaction;
		}
	}

	/** The settings this connection ran, in order, to carry over to physical connections bound later; null until the first. */
	private List<CarriedSetting> settings;
	/** The SQL of the statement {@link #route} just routed if it is a setting, for {@link #prepared} to watch; else null. */
	private String routedSetting;
	private Classification routedSettingClassification;

	RoutingConnection(RoutingRuntime runtime, boolean primaryTenant, boolean readOnlySession) {
		this.runtime = runtime;
		this.primaryTenant = primaryTenant;
		this.readOnlySession = readOnlySession;
		this.readOnly = readOnlySession;
	}

	/**
	 * Binds this connection to its session's routing state, new for the session's first connection;
	 * called right after Hibernate acquired it.
	 */
	void attach(SharedSessionContractImplementor session) {
		attach( runtime.newSessionRouting( session ) );
	}

	/** Binds this connection to an existing session's routing state. */
	void attach(SessionRouting sessionRouting) {
		unit = sessionRouting;
		unit.primaryTenant( primaryTenant );
		unit.refreshSessionStrategy();
		strategyFresh = true;
	}

	/** The session's routing state, or {@code null} if this connection was not acquired through a session. */
	SessionRouting attachedUnit() {
		return unit;
	}

	RoutingRuntime runtime() {
		return runtime;
	}

	SessionRouting unit() {
		if ( unit == null ) {
			// Not acquired through a Hibernate session (or the event monitor is not ours): route with
			// state of our own; escalation then lasts as long as this connection.
			unit = new SessionRouting( runtime, null );
			unit.primaryTenant( primaryTenant );
		}
		return unit;
	}

	// ---- routing --------------------------------------------------------------------------------

	/** The physical connection that must run {@code sql}. */
	private Connection route(String sql) throws SQLException {
		checkOpen();
		final SessionRouting unit = unit();
		strategyFresh = false;
		final Classification classification = runtime.classifier.classify( sql );
		if ( classification.settingScope() != SettingScope.NONE ) {
			routedSetting = sql;
			routedSettingClassification = classification;
		}
		else {
			routedSetting = null;
		}
		final Strategy strategy = unit.strategy( classification.routingHint() );
		if ( !classification.replicaSafe() ) {
			return forWrite( unit, strategy, classification );
		}
		if ( !autoCommit && primary != null ) {
			// This transaction already runs on the primary; its reads must see its own writes.
			return usePrimary( unit, RouteReason.TRANSACTION );
		}
		return switch ( strategy ) {
			case PRIMARY -> usePrimary( unit, classification.routingHint() != null ? RouteReason.FORCED : RouteReason.STRATEGY );
			// REPLICA and STALE_READ accept stale data by definition: no required position.
			case REPLICA -> useReplica( unit, true, RouteReason.READ, Lsn.UNKNOWN );
			case STALE_READ -> useReplica( unit, false, unit.escalated() ? RouteReason.STALE_READ : RouteReason.READ, Lsn.UNKNOWN );
			case READ_AFTER_WRITE -> {
				if ( unit.hasWritten() ) {
					yield usePrimary( unit, RouteReason.ESCALATED );
				}
				if ( !autoCommit && !readOnly && runtime.config.transactions == RoutingSettings.TransactionMode.PRIMARY ) {
					yield usePrimary( unit, RouteReason.TRANSACTION );
				}
				yield replica != null ? replicaUsed( unit, RouteReason.READ ) : useReplica( unit, false, RouteReason.READ, runtime.requiredPosition() );
			}
		};
	}

	private Connection forWrite(SessionRouting unit, Strategy strategy, Classification classification) throws SQLException {
		if ( strategy == Strategy.REPLICA ) {
			throw new ReplicaWriteException( "run a statement that is not read-only (" + describe( classification ) + ")" );
		}
		return writing( unit, RouteReason.WRITE );
	}

	/** Before a write: the shared marker (so other instances send the actor to the primary), then escalation. */
	private Connection writing(SessionRouting unit, RouteReason reason) throws SQLException {
		runtime.beforeWrite();
		unit.escalate( reason );
		if ( autoCommit ) {
			wroteInAutoCommit = true;
		}
		else {
			wroteInTransaction = true;
		}
		return usePrimary( unit, reason );
	}

	/** Raw JDBC whose SQL is not known up front goes to the primary and counts as a write. */
	private Connection forRawJdbc(String what) throws SQLException {
		checkOpen();
		final SessionRouting unit = unit();
		if ( unit.strategy( null ) == Strategy.REPLICA ) {
			throw new ReplicaWriteException( "use " + what + ", whose SQL cannot be checked before it runs" );
		}
		return writing( unit, RouteReason.RAW_JDBC );
	}

	private static String describe(Classification classification) {
		return classification.detail() == null
				? classification.reason().name()
				: classification.reason().name() + ": " + classification.detail();
	}

	private Connection usePrimary(SessionRouting unit, RouteReason reason) throws SQLException {
		if ( primary == null ) {
			primary = configure( runtime.primaryPool.getConnection(), null );
		}
		runtime.metrics.statement( null, reason );
		unit.lastStatementOnReplica = false;
		last = primary;
		if ( settings != null ) {
			carrySettings( primary, true );
		}
		return primary;
	}

	private Connection useReplica(SessionRouting unit, boolean mandatory, RouteReason reason, long required) throws SQLException {
		if ( replica != null ) {
			return replicaUsed( unit, reason );
		}
		if ( required == ActorStamps.PRIMARY_ONLY ) {
			return fallBack( unit, mandatory, RouteReason.PENDING_WRITE, null, null );
		}
		if ( unit.replicaLost() ) {
			return fallBack( unit, mandatory, RouteReason.REPLICA_DOWN, null, null );
		}
		final ReplicaNode.Ineligibility[] whyNot = new ReplicaNode.Ineligibility[1];
		ReplicaNode node = unit.replica();
		if ( node != null ) {
			final ReplicaNode.Ineligibility why = node.ineligibility( runtime.config, required );
			if ( why != null ) {
				// The replica this unit of work read from is gone, too far behind, or short of the
				// required position; another one could be behind what was already read, so only the
				// primary keeps reads monotonic.
				unit.loseReplica();
				return fallBack( unit, mandatory, RouteReason.fallbackFor( why ), null, null );
			}
		}
		final boolean sticky = node != null;
		RouteReason servedReason = reason;
		if ( node == null ) {
			node = runtime.selector.choose( required, null, whyNot );
			if ( required != Lsn.UNKNOWN ) {
				if ( node != null ) {
					runtime.metrics.gate( LsnGate.Outcome.KNOWN, 0 );
				}
				else if ( whyNot[0] == ReplicaNode.Ineligibility.BEHIND_LSN ) {
					node = runtime.gate.await( required, runtime.config.lsnWait.toNanos(), whyNot );
					servedReason = RouteReason.LSN_WAIT;
				}
			}
		}
		SQLException failure = null;
		ReplicaNode failed = null;
		for ( int attempt = 0; node != null && attempt <= runtime.replicas.size(); attempt++ ) {
			final Connection physical;
			try {
				physical = configure( node.pool.getConnection(), node );
			}
			catch (SQLException e) {
				replicaFailed( node, e );
				failure = e;
				failed = node;
				whyNot[0] = ReplicaNode.Ineligibility.DOWN;
				if ( runtime.config.replicaFailure == ReplicaFailure.FAIL || mandatory || sticky ) {
					// Under FALLBACK a unit of work that already read from this replica moves to the
					// primary, never to another replica that could be behind what it read.
					if ( sticky ) {
						unit.loseReplica();
					}
					break;
				}
				// Nothing ran on the failed replica yet, so another one is as good.
				node = runtime.selector.choose( required, node, whyNot );
				continue;
			}
			replica = physical;
			replicaNode = node;
			unit.replica( node );
			return replicaUsed( unit, servedReason );
		}
		return fallBack( unit, mandatory, RouteReason.fallbackFor( whyNot[0] ), failure, failed );
	}

	private Connection replicaUsed(SessionRouting unit, RouteReason reason) throws SQLException {
		runtime.metrics.statement( replicaNode, reason );
		unit.lastStatementOnReplica = true;
		last = replica;
		if ( settings != null ) {
			carrySettings( replica, false );
		}
		return replica;
	}

	private void replicaFailed(ReplicaNode node, SQLException e) {
		runtime.metrics.replicaFailure( node );
		if ( node.markFailed() ) {
			LOG.warn( "Replica {} failed to give a connection ({}); its circuit breaker is open", node, e.getMessage() );
		}
	}

	private Connection fallBack(SessionRouting unit, boolean mandatory, RouteReason reason, SQLException failure, ReplicaNode node)
			throws SQLException {
		if ( mandatory || runtime.config.replicaFailure == ReplicaFailure.FAIL ) {
			final String message = ( failure != null
					? "Replica " + ( node != null ? node : "" ) + " could not give a connection: " + failure.getMessage()
					: "No replica can serve this read (" + reason.tag + ")" )
					+ ( mandatory
							? "; strategy REPLICA never moves reads to the primary. Use Strategy.READ_AFTER_WRITE to allow it"
							: "; " + RoutingSettings.REPLICA_FAILURE + "=FAIL surfaces this. Set it to FALLBACK to use another replica or the primary" );
			throw new SQLException( message, "08001", failure );
		}
		runtime.metrics.fallback( reason );
		return usePrimary( unit, reason );
	}

	/**
	 * Gives a physical connection just borrowed this connection's state.
	 *
	 * @param node the replica it comes from, {@code null} for the primary
	 */
	private Connection configure(Connection physical, ReplicaNode node) throws SQLException {
		final boolean onReplica = node != null;
		try {
			if ( onReplica ) {
				replicaTransaction = !autoCommit && replicaTransactionNeeded( node );
			}
			if ( !autoCommit && ( !onReplica || replicaTransaction ) ) {
				physical.setAutoCommit( false );
			}
			if ( isolation != null ) {
				physical.setTransactionIsolation( isolation );
			}
			if ( readOnly && !onReplica ) {
				physical.setReadOnly( true );
			}
			if ( schema != null ) {
				physical.setSchema( schema );
			}
			return physical;
		}
		catch (SQLException | RuntimeException e) {
			physical.close();
			throw e;
		}
	}

	/**
	 * Whether a transaction's reads on {@code node} need a transaction there too. A read-write
	 * transaction's reads at READ COMMITTED take a new snapshot per statement anyway, so they run in
	 * auto-commit on the replica: the same results, without a {@code BEGIN} and a second
	 * {@code COMMIT} per transaction, and without a snapshot held open on the standby while the
	 * transaction goes on (which would hold back vacuum through {@code hot_standby_feedback}, or get
	 * cancelled by recovery conflicts). A read-only transaction lives wholly on the replica and keeps
	 * its transaction, as do stricter isolation levels (one snapshot for the transaction) and, see
	 * {@link #replicaCursorWanted}, a statement that asks for a fetch size.
	 */
	private boolean replicaTransactionNeeded(ReplicaNode node) {
		if ( readOnly ) {
			return true;
		}
		if ( isolation == null ) {
			return !node.readCommittedByDefault;
		}
		return isolation != TRANSACTION_READ_COMMITTED && isolation != TRANSACTION_READ_UNCOMMITTED;
	}

	/**
	 * A statement on the replica asked for a fetch size: pgjdbc streams rows through a cursor only
	 * inside a transaction, so the replica connection starts one now (the driver sends its
	 * {@code BEGIN} with the next statement) rather than read the whole result at once.
	 */
	void replicaCursorWanted(Connection physical) throws SQLException {
		if ( physical == replica ) {
			replicaTransactionWanted();
		}
	}

	/** In a transaction, the replica connection starts one of its own if it runs without. */
	private void replicaTransactionWanted() throws SQLException {
		if ( !autoCommit && !replicaTransaction ) {
			replica.setAutoCommit( false );
			replicaTransaction = true;
		}
	}

	/**
	 * {@code statement} as prepared on {@code target}, watched if it is a setting (see
	 * {@link #settingRan}) or if a fetch size could need {@link #replicaCursorWanted}.
	 */
	private PreparedStatement prepared(Connection target, PreparedStatement statement) throws SQLException {
		final String setting = routedSetting;
		if ( setting != null ) {
			routedSetting = null;
			if ( target == replica ) {
				// Inside a transaction a setting must end with it (SET LOCAL) or be undone by its
				// rollback (SET), so the replica needs a transaction of its own for it.
				replicaTransactionWanted();
			}
			return new WatchedStatement( statement, this, target, setting, routedSettingClassification );
		}
		return target == replica && !autoCommit && !replicaTransaction
				? new WatchedStatement( statement, this, target )
				: statement;
	}

	/**
	 * A {@code SET} or {@code RESET} ran on {@code physical}. To the application this is one
	 * connection, so the setting must hold for every statement that follows, wherever it runs: it is
	 * recorded and run again, in order, on each other physical connection before its next statement
	 * ({@link #carrySettings}), and on connections bound later, until the transaction ends for
	 * {@code SET LOCAL}, {@code SET TRANSACTION} and {@code SET CONSTRAINTS}, and for as long as this
	 * connection lives otherwise, unless the transaction it ran in rolls back. Only settings that ran
	 * without an error are recorded.
	 */
	void settingRan(Connection physical, String sql, Classification classification) {
		final boolean untilTransactionEnds = classification.settingScope() == SettingScope.TRANSACTION;
		if ( untilTransactionEnds && autoCommit ) {
			// Outside a transaction SET LOCAL has no effect (the server only warns): nothing to carry.
			return;
		}
		final CarriedSetting setting = new CarriedSetting( sql, classification.detail(), untilTransactionEnds );
		setting.inTransaction = !autoCommit;
		setting.onPrimary = physical != null && physical == primary;
		setting.onReplica = physical != null && physical == replica;
		if ( settings == null ) {
			settings = new ArrayList<>( 2 );
		}
		else if ( !settings.isEmpty() && settings.get( settings.size() - 1 ).replacedBy( setting ) ) {
			// The same parameter set again right after: the newer value replaces the older, so a
			// loop of SETs leaves one entry. Only the last one: an earlier entry may matter to the
			// ones after it (a SET ROLE that allowed them).
			settings.remove( settings.size() - 1 );
		}
		settings.add( setting );
	}

	/** The SQL of the settings this connection carries, in order; for tests. */
	List<String> carriedSettings() {
		return settings == null ? List.of() : settings.stream().map( setting -> setting.sql ).toList();
	}

	/** Runs on {@code physical}, in order, the recorded settings it does not have yet. */
	private void carrySettings(Connection physical, boolean isPrimary) throws SQLException {
		for ( CarriedSetting setting : settings ) {
			if ( isPrimary ? setting.onPrimary : setting.onReplica ) {
				continue;
			}
			if ( !isPrimary ) {
				replicaTransactionWanted();
			}
			try (Statement statement = physical.createStatement()) {
				statement.execute( setting.sql );
			}
			catch (SQLException e) {
				throw new SQLException( "Could not carry a SET or RESET statement this unit of work ran over to the "
						+ ( isPrimary ? "primary" : "replica " + replicaNode ) + ", where its next statement runs: " + e.getMessage()
						+ ". Set session configuration in the JDBC URL (options=-c name=value) or with SET LOCAL inside the transaction instead",
						e.getSQLState(), e );
			}
			if ( isPrimary ) {
				setting.onPrimary = true;
			}
			else {
				setting.onReplica = true;
			}
		}
	}

	/** The connection for metadata-like calls: whatever is bound, else the primary. */
	private Connection anyPhysical() throws SQLException {
		checkOpen();
		if ( last != null ) {
			return last;
		}
		if ( primary == null ) {
			primary = configure( runtime.primaryPool.getConnection(), null );
		}
		last = primary;
		return primary;
	}

	/**
	 * Reads the WAL position that covers the write just committed on the primary and records it.
	 * Never throws: the write is committed, and reporting a failure now would make the caller
	 * believe it was not. Without the position, the actor is kept on the primary instead.
	 */
	private void captureCommit() {
		if ( RoutingScope.current() == null ) {
			// Nothing would consume the position (no scope to record it in, no actor to stamp): skip the round trip.
			return;
		}
		try {
			// Auto-commit first, so that the query does not open a transaction the pool must roll back.
			primary.setAutoCommit( true );
			runtime.afterCommit( RoutingRuntime.insertPosition( primary ) );
		}
		catch (SQLException e) {
			LOG.warn( "Could not read the WAL position after a commit ({}); this actor's reads use the primary for a while",
					e.getMessage() );
			runtime.commitPositionUnknown();
		}
	}

	private void releasePhysicals() throws SQLException {
		if ( wroteInAutoCommit && primary != null ) {
			wroteInAutoCommit = false;
			captureCommit();
		}
		wroteInTransaction = false;
		SQLException failure = null;
		if ( replica != null ) {
			try {
				releaseReplica();
			}
			catch (SQLException e) {
				failure = e;
			}
		}
		if ( primary != null ) {
			try {
				primary.close();
			}
			catch (SQLException e) {
				if ( failure == null ) {
					failure = e;
				}
				else {
					failure.addSuppressed( e );
				}
			}
			primary = null;
		}
		last = null;
		if ( settings != null ) {
			// The transaction ended: SET LOCAL is gone, and the next physical connections need the rest again.
			settings.removeIf( setting -> setting.untilTransactionEnds );
			for ( CarriedSetting setting : settings ) {
				setting.onPrimary = false;
				setting.onReplica = false;
			}
		}
		if ( failure != null ) {
			throw failure;
		}
	}

	/** Returns the replica connection to its pool, read-only again if a setting ran on it; the next one needs the settings anew. */
	private void releaseReplica() throws SQLException {
		try {
			if ( settings != null ) {
				restoreReadOnly();
				settings.forEach( setting -> setting.onReplica = false );
			}
			replica.close();
		}
		finally {
			replica = null;
			replicaNode = null;
		}
	}

	/**
	 * The transaction ended: the session-level settings made in it hold from now on if it
	 * committed; PostgreSQL undoes them if it rolled back. ({@link #releasePhysicals} drops
	 * {@code SET LOCAL} either way.)
	 */
	private void settingsEnded(boolean committed) {
		if ( settings == null ) {
			return;
		}
		if ( committed ) {
			for ( CarriedSetting setting : settings ) {
				setting.inTransaction = false;
			}
		}
		else {
			settings.removeIf( setting -> setting.inTransaction );
		}
	}

	/**
	 * A session-level setting on the replica connection may have been {@code RESET ALL} or
	 * {@code RESET default_transaction_read_only}: before it goes back to the pool, make it read-only
	 * again, as the pool's init SQL did (G6). If that fails the connection leaves the pool.
	 */
	private void restoreReadOnly() {
		for ( CarriedSetting setting : settings ) {
			if ( setting.onReplica && !setting.untilTransactionEnds ) {
				try {
					// Outside a transaction, or a rollback would undo it; the replica's transaction only read.
					replica.setAutoCommit( true );
					try (Statement statement = replica.createStatement()) {
						statement.execute( RoutingRuntime.READ_ONLY_SESSION );
					}
				}
				catch (SQLException e) {
					LOG.debug( "Could not make a connection to {} read-only again ({}); evicting it", replicaNode, e.getMessage() );
					replicaNode.pool.evictConnection( replica );
				}
				return;
			}
		}
	}

	private void checkOpen() throws SQLException {
		if ( closed ) {
			throw new SQLException( "Connection is closed", "08003" );
		}
	}

	// ---- statements -----------------------------------------------------------------------------

	@Override
	public PreparedStatement prepareStatement(String sql) throws SQLException {
		final Connection target = route( sql );
		return prepared( target, target.prepareStatement( sql ) );
	}

	@Override
	public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency) throws SQLException {
		final Connection target = route( sql );
		return prepared( target, target.prepareStatement( sql, resultSetType, resultSetConcurrency ) );
	}

	@Override
	public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability)
			throws SQLException {
		final Connection target = route( sql );
		return prepared( target, target.prepareStatement( sql, resultSetType, resultSetConcurrency, resultSetHoldability ) );
	}

	@Override
	public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
		final Connection target = route( sql );
		return prepared( target, target.prepareStatement( sql, autoGeneratedKeys ) );
	}

	@Override
	public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
		final Connection target = route( sql );
		return prepared( target, target.prepareStatement( sql, columnIndexes ) );
	}

	@Override
	public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
		final Connection target = route( sql );
		return prepared( target, target.prepareStatement( sql, columnNames ) );
	}

	@Override
	public Statement createStatement() throws SQLException {
		return forRawJdbc( "a plain JDBC Statement" ).createStatement();
	}

	@Override
	public Statement createStatement(int resultSetType, int resultSetConcurrency) throws SQLException {
		return forRawJdbc( "a plain JDBC Statement" ).createStatement( resultSetType, resultSetConcurrency );
	}

	@Override
	public Statement createStatement(int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
		return forRawJdbc( "a plain JDBC Statement" ).createStatement( resultSetType, resultSetConcurrency, resultSetHoldability );
	}

	@Override
	public CallableStatement prepareCall(String sql) throws SQLException {
		return forRawJdbc( "a CallableStatement" ).prepareCall( sql );
	}

	@Override
	public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency) throws SQLException {
		return forRawJdbc( "a CallableStatement" ).prepareCall( sql, resultSetType, resultSetConcurrency );
	}

	@Override
	public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability)
			throws SQLException {
		return forRawJdbc( "a CallableStatement" ).prepareCall( sql, resultSetType, resultSetConcurrency, resultSetHoldability );
	}

	@Override
	public String nativeSQL(String sql) throws SQLException {
		return anyPhysical().nativeSQL( sql );
	}

	// ---- transactions ---------------------------------------------------------------------------

	@Override
	public void setAutoCommit(boolean autoCommit) throws SQLException {
		checkOpen();
		if ( this.autoCommit == autoCommit ) {
			return;
		}
		if ( autoCommit ) {
			// JDBC: switching auto-commit on commits the open transaction.
			if ( primary != null ) {
				primary.setAutoCommit( true );
				if ( wroteInTransaction ) {
					wroteInTransaction = false;
					captureCommit();
				}
			}
			settingsEnded( true );
			this.autoCommit = true;
			releasePhysicals();
			return;
		}
		// A transaction begins: start it wherever its first statement decides.
		this.autoCommit = false;
		if ( replica != null ) {
			releaseReplica();
			last = primary;
		}
		if ( primary != null ) {
			primary.setAutoCommit( false );
		}
		if ( !strategyFresh ) {
			unit().refreshSessionStrategy();
			strategyFresh = true;
		}
	}

	@Override
	public boolean getAutoCommit() throws SQLException {
		checkOpen();
		return autoCommit;
	}

	@Override
	public void commit() throws SQLException {
		checkOpen();
		boolean committed = false;
		try {
			if ( primary != null ) {
				primary.commit();
				if ( wroteInTransaction ) {
					wroteInTransaction = false;
					captureCommit();
				}
			}
			committed = true;
			if ( replica != null && replicaTransaction ) {
				try {
					replica.commit();
				}
				catch (SQLException e) {
					// A read-only transaction; its reads were already returned. Nothing to undo.
					LOG.debug( "Ending the read-only transaction on {} failed: {}", replicaNode, e.getMessage() );
				}
			}
		}
		finally {
			settingsEnded( committed );
			releasePhysicals();
		}
	}

	@Override
	public void rollback() throws SQLException {
		checkOpen();
		settingsEnded( false );
		try {
			SQLException failure = null;
			if ( primary != null ) {
				try {
					primary.rollback();
				}
				catch (SQLException e) {
					failure = e;
				}
			}
			if ( replica != null && replicaTransaction ) {
				try {
					replica.rollback();
				}
				catch (SQLException e) {
					LOG.debug( "Rolling back the read-only transaction on {} failed: {}", replicaNode, e.getMessage() );
				}
			}
			if ( failure != null ) {
				throw failure;
			}
		}
		finally {
			releasePhysicals();
		}
	}

	@Override
	public Savepoint setSavepoint() throws SQLException {
		return forRawJdbc( "a savepoint" ).setSavepoint();
	}

	@Override
	public Savepoint setSavepoint(String name) throws SQLException {
		return forRawJdbc( "a savepoint" ).setSavepoint( name );
	}

	@Override
	public void rollback(Savepoint savepoint) throws SQLException {
		forRawJdbc( "a savepoint" ).rollback( savepoint );
	}

	@Override
	public void releaseSavepoint(Savepoint savepoint) throws SQLException {
		forRawJdbc( "a savepoint" ).releaseSavepoint( savepoint );
	}

	@Override
	public void close() throws SQLException {
		if ( closed ) {
			return;
		}
		closed = true;
		// HikariCP rolls back a connection returned with an open transaction.
		releasePhysicals();
	}

	@Override
	public boolean isClosed() {
		return closed;
	}

	@Override
	public void abort(Executor executor) throws SQLException {
		closed = true;
		if ( replica != null ) {
			replica.abort( executor );
		}
		if ( primary != null ) {
			primary.abort( executor );
		}
		replica = null;
		primary = null;
		last = null;
	}

	// ---- connection state -----------------------------------------------------------------------

	@Override
	public void setReadOnly(boolean readOnly) throws SQLException {
		checkOpen();
		this.readOnly = readOnly || readOnlySession;
		if ( primary != null ) {
			primary.setReadOnly( this.readOnly );
		}
	}

	@Override
	public boolean isReadOnly() throws SQLException {
		checkOpen();
		return readOnly;
	}

	@Override
	public void setTransactionIsolation(int level) throws SQLException {
		checkOpen();
		isolation = level;
		if ( primary != null ) {
			primary.setTransactionIsolation( level );
		}
		if ( replica != null ) {
			replica.setTransactionIsolation( level );
			if ( !autoCommit && !replicaTransaction && replicaTransactionNeeded( replicaNode ) ) {
				// One snapshot for the rest of the transaction from here on.
				replica.setAutoCommit( false );
				replicaTransaction = true;
			}
		}
	}

	@Override
	public int getTransactionIsolation() throws SQLException {
		checkOpen();
		return isolation != null ? isolation : last != null ? last.getTransactionIsolation() : TRANSACTION_READ_COMMITTED;
	}

	@Override
	public void setSchema(String schema) throws SQLException {
		checkOpen();
		this.schema = schema;
		if ( primary != null ) {
			primary.setSchema( schema );
		}
		if ( replica != null ) {
			replica.setSchema( schema );
		}
	}

	@Override
	public String getSchema() throws SQLException {
		return schema != null ? schema : anyPhysical().getSchema();
	}

	@Override
	public DatabaseMetaData getMetaData() throws SQLException {
		return anyPhysical().getMetaData();
	}

	@Override
	public void setCatalog(String catalog) throws SQLException {
		// PostgreSQL has no catalog switching; pgjdbc ignores this too.
		checkOpen();
	}

	@Override
	public String getCatalog() throws SQLException {
		return anyPhysical().getCatalog();
	}

	@Override
	public SQLWarning getWarnings() throws SQLException {
		checkOpen();
		return last != null ? last.getWarnings() : null;
	}

	@Override
	public void clearWarnings() throws SQLException {
		checkOpen();
		if ( last != null ) {
			last.clearWarnings();
		}
	}

	@Override
	public Map<String, Class<?>> getTypeMap() throws SQLException {
		return anyPhysical().getTypeMap();
	}

	@Override
	public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
		anyPhysical().setTypeMap( map );
	}

	@Override
	public void setHoldability(int holdability) throws SQLException {
		anyPhysical().setHoldability( holdability );
	}

	@Override
	public int getHoldability() throws SQLException {
		return anyPhysical().getHoldability();
	}

	@Override
	public Clob createClob() throws SQLException {
		return anyPhysical().createClob();
	}

	@Override
	public Blob createBlob() throws SQLException {
		return anyPhysical().createBlob();
	}

	@Override
	public NClob createNClob() throws SQLException {
		return anyPhysical().createNClob();
	}

	@Override
	public SQLXML createSQLXML() throws SQLException {
		return anyPhysical().createSQLXML();
	}

	@Override
	public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
		return anyPhysical().createArrayOf( typeName, elements );
	}

	@Override
	public Struct createStruct(String typeName, Object[] attributes) throws SQLException {
		return anyPhysical().createStruct( typeName, attributes );
	}

	@Override
	public boolean isValid(int timeout) throws SQLException {
		return !closed && ( last == null || last.isValid( timeout ) );
	}

	@Override
	public void setClientInfo(String name, String value) throws SQLClientInfoException {
		// Client info is connection state that would not follow a statement to another server.
		LOG.debug( "Ignoring client info {} on a routed connection", name );
	}

	@Override
	public void setClientInfo(Properties properties) throws SQLClientInfoException {
		LOG.debug( "Ignoring client info on a routed connection" );
	}

	@Override
	public String getClientInfo(String name) {
		return null;
	}

	@Override
	public Properties getClientInfo() {
		return new Properties();
	}

	@Override
	public void setNetworkTimeout(Executor executor, int milliseconds) throws SQLException {
		anyPhysical().setNetworkTimeout( executor, milliseconds );
	}

	@Override
	public int getNetworkTimeout() throws SQLException {
		return anyPhysical().getNetworkTimeout();
	}

	@Override
	public <T> T unwrap(Class<T> type) throws SQLException {
		if ( type.isInstance( this ) ) {
			return type.cast( this );
		}
		// Driver-specific APIs (COPY, large objects, notifications) may write: the primary.
		return forRawJdbc( "the driver's own API (" + type.getSimpleName() + ")" ).unwrap( type );
	}

	@Override
	public boolean isWrapperFor(Class<?> type) throws SQLException {
		return type.isInstance( this ) || anyPhysical().isWrapperFor( type );
	}

	@Override
	public String toString() {
		return "RoutingConnection[" + ( last == null ? "unbound" : last == primary ? "primary" : String.valueOf( replicaNode ) ) + "]";
	}
}
