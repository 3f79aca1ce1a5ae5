package io.github.hibernaterouting.routing.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;

/**
 * One hot standby: its pool, its circuit breaker, and what was last learned about it.
 *
 * <p>The state fields are written by the health check (and by on-demand checks) and read on every
 * routing decision without locking; each is a single volatile, so a reader may combine values from
 * two checks, which only ever errs by one check interval.
 */
public final class ReplicaNode {
	/** Why a replica cannot serve a read right now; the value doubles as a metrics tag. */
	enum Ineligibility {
		DOWN( "replica-down" ), NOT_IN_RECOVERY( "not-in-recovery" ), LAG_BOUND( "lag-bound" ), BEHIND_LSN( "lsn-behind" );

		final String tag;

		Ineligibility(String tag) {
			this.tag = tag;
		}
	}

	static final String CHECK_SQL = "select pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, "
			+ "coalesce(pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn(), true), "
			+ "extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp()), "
			+ "current_setting('transaction_isolation') in ('read committed', 'read uncommitted')";

	final int index;
	final String name;
	final String maskedUrl;
	final HikariDataSource pool;
	final CircuitBreaker breaker;

	volatile boolean checked;
	volatile boolean reachable;
	volatile boolean inRecovery = true;
	volatile long replayLsn = Lsn.UNKNOWN;
	volatile long lagBytes = -1;
	volatile double lagSeconds = Double.NaN;
	/**
	 * Whether a pooled connection's transactions run at READ COMMITTED unless told otherwise (the
	 * server's, database's, role's or URL's {@code default_transaction_isolation}); {@code false}
	 * until a check says so.
	 */
	volatile boolean readCommittedByDefault;

	ReplicaNode(int index, String name, String maskedUrl, HikariDataSource pool, CircuitBreaker breaker) {
		this.index = index;
		this.name = name;
		this.maskedUrl = maskedUrl;
		this.pool = pool;
		this.breaker = breaker;
	}

	/** The replica's name in logs and meter tags ({@code replica1}, {@code replica2}, …). */
	public String name() {
		return name;
	}

	/** The last known replay position, {@link Lsn#UNKNOWN} before the first check. */
	public long replayLsn() {
		return replayLsn;
	}

	/** Bytes of WAL the replica had left to replay at the last check, {@code -1} if unknown. */
	public long lagBytes() {
		return lagBytes;
	}

	/** Seconds since the replica last replayed a transaction while behind, {@code 0} when caught up, NaN if unknown. */
	public double lagSeconds() {
		return lagSeconds;
	}

	/** Whether the breaker is closed and the last check reached the server. */
	public boolean isUp() {
		return reachable && breaker.isClosed();
	}

	/**
	 * Why this replica cannot serve a read needing {@code minimumLsn}, or {@code null} if it can.
	 * Requests only use replicas whose breaker is closed; the health check makes the half-open trial.
	 */
	Ineligibility ineligibility(RoutingConfig config, long minimumLsn) {
		if ( !reachable || !breaker.isClosed() ) {
			return Ineligibility.DOWN;
		}
		if ( config.checkRecovery && !inRecovery ) {
			return Ineligibility.NOT_IN_RECOVERY;
		}
		if ( config.maxReplicaLagBytes > 0 && ( lagBytes < 0 || lagBytes > config.maxReplicaLagBytes ) ) {
			return Ineligibility.LAG_BOUND;
		}
		final long maxLagMillis = config.maxReplicaLag.toMillis();
		if ( maxLagMillis > 0 && lagSeconds * 1000 > maxLagMillis ) {
			return Ineligibility.LAG_BOUND;
		}
		if ( minimumLsn != Lsn.UNKNOWN && !Lsn.reached( replayLsn, minimumLsn ) ) {
			return Ineligibility.BEHIND_LSN;
		}
		return null;
	}

	/**
	 * Asks the replica where it is, over a pooled connection, and records the answer.
	 *
	 * @param primaryLsn the primary's current position, to compute the byte lag, or {@link Lsn#UNKNOWN}
	 * @return whether the replica answered
	 */
	boolean check(long primaryLsn, int queryTimeoutSeconds) {
		try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
			statement.setQueryTimeout( queryTimeoutSeconds );
			try (ResultSet rs = statement.executeQuery( CHECK_SQL )) {
				rs.next();
				record( rs.getBoolean( 1 ), rs.getString( 2 ), rs.getBoolean( 3 ), rs.getObject( 4 ) == null ? Double.NaN : rs.getDouble( 4 ), primaryLsn );
				readCommittedByDefault = rs.getBoolean( 5 );
			}
			reachable = true;
			if ( breaker.isClosed() || breaker.trialDue() ) {
				breaker.onSuccess();
			}
			return true;
		}
		catch (SQLException e) {
			markFailed();
			return false;
		}
		finally {
			checked = true;
		}
	}

	void record(boolean recovery, String replay, boolean replayedAllReceived, double secondsSinceReplay, long primaryLsn) {
		inRecovery = recovery;
		if ( !recovery ) {
			// Not a standby (promoted, or a primary under another address): its data is the primary's
			// own. Eligibility refuses it unless the in-recovery check is switched off (benchmarks).
			replayLsn = primaryLsn;
			lagBytes = 0;
			lagSeconds = 0.0;
			return;
		}
		final long replay0 = Lsn.parse( replay );
		// Exactly what the replica says, even if lower than before: a standby restarted after a crash
		// replays again from its last restart point, and reads then see that older state.
		replayLsn = replay0;
		final long bytes = primaryLsn == Lsn.UNKNOWN ? -1 : Lsn.distance( replay0, primaryLsn );
		lagBytes = bytes;
		// An idle primary sends no new transactions, so "time since last replay" grows on a replica
		// that is fully caught up; it only measures lag while there is WAL left to replay.
		lagSeconds = bytes == 0 || replayedAllReceived && bytes <= 0 ? 0.0 : Math.max( 0.0, secondsSinceReplay );
	}

	/** Tagged so that server logs tell the gate's checks from the application's reads. */
	static final String REPLAY_SQL = "/* hibernate-routing lsn-gate */ select pg_last_wal_replay_lsn()::text";

	/** Asks the replica how far it has replayed, for the LSN gate; a failure takes it out of rotation. */
	void refreshReplay() {
		try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery( REPLAY_SQL )) {
			if ( rs.next() && rs.getString( 1 ) != null ) {
				observedReplay( Lsn.parse( rs.getString( 1 ) ) );
			}
		}
		catch (SQLException e) {
			markFailed();
		}
	}

	/**
	 * Takes the replica out of rotation after a failure: opens (or keeps open) its breaker and drops
	 * its pooled connections, which a restarted or killed server has invalidated anyway.
	 *
	 * @return whether this failure opened the breaker
	 */
	boolean markFailed() {
		reachable = false;
		// Whatever it had replayed is no longer known once it comes back (see record).
		replayLsn = Lsn.UNKNOWN;
		final HikariPoolMXBean connections = pool.getHikariPoolMXBean();
		if ( connections != null ) {
			connections.softEvictConnections();
		}
		return breaker.onFailure();
	}

	/** Raises the known replay position after a check made elsewhere (for example by the LSN gate). */
	void observedReplay(long lsn) {
		if ( Lsn.reached( lsn, replayLsn ) ) {
			replayLsn = lsn;
		}
	}

	@Override
	public String toString() {
		return name + "(" + maskedUrl + ")";
	}
}
