package io.github.hibernaterouting.routing.internal;

import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Finds a replica that has replayed at least a required WAL position, waiting a short, bounded time
 * for one to get there.
 *
 * <p>The common case costs nothing: the replicas' last known positions (from the health check and
 * from earlier gate checks) are in memory. Only when none is known to be far enough does the gate
 * ask the replicas ({@code pg_last_wal_replay_lsn()}), and then poll them until the wait is over
 * (100 ms by default; seed 004: replica lag is almost always small). Thread-safe.
 */
final class LsnGate {
	/** How a gate check ended; the value is the {@code outcome} tag of the meters. */
	enum Outcome {
		/** A replica was already known to be far enough. */
		KNOWN( "known" ),
		/** Asking the replicas once found one. */
		CHECKED( "checked" ),
		/** One got there during the wait. */
		WAITED( "waited" ),
		/** None got there in time. */
		TIMED_OUT( "timed-out" );

		final String tag;

		Outcome(String tag) {
			this.tag = tag;
		}
	}

	private final RoutingConfig config;
	private final List<ReplicaNode> replicas;
	private final ReplicaSelector selector;
	private final RoutingMetrics metrics;

	LsnGate(RoutingConfig config, List<ReplicaNode> replicas, ReplicaSelector selector, RoutingMetrics metrics) {
		this.config = config;
		this.replicas = replicas;
		this.selector = selector;
		this.metrics = metrics;
	}

	/**
	 * A replica that has replayed {@code required}, asking and waiting if needed, or {@code null}.
	 *
	 * @param maxWaitNanos how long to wait at most (the worker API passes its own bound)
	 */
	ReplicaNode await(long required, long maxWaitNanos, ReplicaNode.Ineligibility[] whyNot) {
		final long start = System.nanoTime();
		final long deadline = start + maxWaitNanos;
		boolean first = true;
		while ( true ) {
			boolean anyCandidate = false;
			for ( ReplicaNode node : replicas ) {
				// Only replicas that could serve but for their position are worth asking.
				if ( node.ineligibility( config, Lsn.UNKNOWN ) == null ) {
					anyCandidate = true;
					node.refreshReplay();
				}
			}
			final ReplicaNode node = selector.choose( required, null, whyNot );
			if ( node != null ) {
				metrics.gate( first ? Outcome.CHECKED : Outcome.WAITED, System.nanoTime() - start );
				return node;
			}
			if ( !anyCandidate || System.nanoTime() >= deadline ) {
				metrics.gate( Outcome.TIMED_OUT, System.nanoTime() - start );
				return null;
			}
			first = false;
			LockSupport.parkNanos( Math.min( config.lsnPollInterval.toNanos(), Math.max( 0, deadline - System.nanoTime() ) ) );
		}
	}
}
