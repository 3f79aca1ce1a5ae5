package io.github.hibernaterouting.routing.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/**
 * The library's Micrometer meters. Counters are created on first use and kept in arrays, so that
 * recording a routing decision is an array read and an increment.
 *
 * <p>No meter carries SQL, parameter values, URLs or credentials: tags are node names and reasons.
 */
public final class RoutingMetrics {
	static final String STATEMENTS = "hibernate.routing.statements";
	static final String ESCALATIONS = "hibernate.routing.escalations";
	static final String FALLBACKS = "hibernate.routing.fallbacks";
	static final String REPLICA_FAILURES = "hibernate.routing.replica.failures";

	private final MeterRegistry registry;
	private final String[] nodeNames;
	private final Counter[][] statements;
	private final Counter[] escalations = new Counter[RouteReason.values().length];
	private final Counter[] fallbacks = new Counter[RouteReason.values().length];
	private final Counter[] replicaFailures;
	private final Counter[] gateOutcomes = new Counter[LsnGate.Outcome.values().length];
	private final Timer gateWait;
	private final Counter stampErrors;
	final DecisionLog decisions = new DecisionLog();
	/**
	 * Per-node counts for {@code RoutingStatus}, kept here and not read back from the meters: with
	 * no registry attached (the global registry's default), Micrometer counters count nothing.
	 */
	private final LongAdder[] reads;
	private final LongAdder[] writes;

	private final Tags common;
	private final List<Meter> gauges = new ArrayList<>();

	RoutingMetrics(Object configured, String persistenceUnit, List<ReplicaNode> replicas) {
		this.registry = configured instanceof MeterRegistry r ? r : Metrics.globalRegistry;
		// Several persistence units in one JVM must not share (or silently drop) each other's meters.
		this.common = Tags.of( "persistence_unit", persistenceUnit );
		nodeNames = new String[replicas.size() + 1];
		nodeNames[0] = "primary";
		for ( ReplicaNode node : replicas ) {
			nodeNames[node.index + 1] = node.name;
		}
		statements = new Counter[nodeNames.length][RouteReason.values().length];
		reads = new LongAdder[nodeNames.length];
		writes = new LongAdder[nodeNames.length];
		for ( int i = 0; i < nodeNames.length; i++ ) {
			reads[i] = new LongAdder();
			writes[i] = new LongAdder();
		}
		replicaFailures = new Counter[replicas.size()];
		gateWait = Timer.builder( "hibernate.routing.lsn_gate.wait" )
				.description( "Time units of work spent waiting for a replica to reach their required WAL position" )
				.tags( common ).register( registry );
		stampErrors = Counter.builder( "hibernate.routing.actor_stamps.errors" )
				.description( "Failures to advance an actor's stamp in the actors' table after a commit" )
				.tags( common ).register( registry );
		for ( ReplicaNode node : replicas ) {
			gauges.add( Gauge.builder( "hibernate.routing.replica.lag.bytes", node, n -> n.lagBytes < 0 ? Double.NaN : n.lagBytes )
					.description( "Bytes of WAL the replica had left to replay at the last check" )
					.baseUnit( "bytes" ).tags( common ).tag( "node", node.name ).register( registry ) );
			gauges.add( Gauge.builder( "hibernate.routing.replica.lag.seconds", node, n -> n.lagSeconds )
					.description( "Seconds since the replica last replayed a transaction while behind; 0 when caught up" )
					.baseUnit( "seconds" ).tags( common ).tag( "node", node.name ).register( registry ) );
			gauges.add( Gauge.builder( "hibernate.routing.replica.up", node, n -> n.isUp() ? 1 : 0 )
					.description( "1 when the replica answered its last check and its circuit breaker is closed" )
					.tags( common ).tag( "node", node.name ).register( registry ) );
			gauges.add( Gauge.builder( "hibernate.routing.replica.circuit.state", node, n -> n.breaker.state().ordinal() )
					.description( "Circuit breaker state: 0 closed, 1 open, 2 half-open" )
					.tags( common ).tag( "node", node.name ).register( registry ) );
		}
	}

	/** The registry meters are recorded in. */
	public MeterRegistry registry() {
		return registry;
	}

	/** Counts one statement; {@code replica} is {@code null} for the primary. */
	void statement(ReplicaNode replica, RouteReason reason) {
		final int node = replica == null ? 0 : replica.index + 1;
		Counter counter = statements[node][reason.ordinal()];
		if ( counter == null ) {
			counter = Counter.builder( STATEMENTS )
					.description( "Statements routed, by serving node and reason" )
					.tags( common )
					.tag( "target", replica == null ? "primary" : "replica" )
					.tag( "node", nodeNames[node] )
					.tag( "reason", reason.tag )
					.register( registry );
			statements[node][reason.ordinal()] = counter;
		}
		counter.increment();
		( reason == RouteReason.WRITE || reason == RouteReason.RAW_JDBC ? writes : reads )[node].increment();
		decisions.record( node, reason );
	}

	/** Statements counted for a node ({@code null} = primary): writes if {@code writes}, else reads. */
	long statements(ReplicaNode replica, boolean writes) {
		final int node = replica == null ? 0 : replica.index + 1;
		return ( writes ? this.writes : this.reads )[node].sum();
	}

	String nodeName(int node) {
		return nodeNames[node];
	}

	void escalation(RouteReason reason) {
		counter( escalations, ESCALATIONS, "Units of work moved to the primary for the rest of their life", reason ).increment();
	}

	void fallback(RouteReason reason) {
		counter( fallbacks, FALLBACKS, "Reads that wanted a replica and went to the primary", reason ).increment();
	}

	void replicaFailure(ReplicaNode node) {
		Counter counter = replicaFailures[node.index];
		if ( counter == null ) {
			counter = Counter.builder( REPLICA_FAILURES ).description( "Failures to get a connection from a replica" )
					.tags( common ).tag( "node", node.name ).register( registry );
			replicaFailures[node.index] = counter;
		}
		counter.increment();
	}

	/** Counts a check of the LSN gate and, unless the position was already known, the time it took. */
	void gate(LsnGate.Outcome outcome, long nanos) {
		Counter counter = gateOutcomes[outcome.ordinal()];
		if ( counter == null ) {
			counter = Counter.builder( "hibernate.routing.lsn_gate" )
					.description( "Units of work that needed a WAL position, by how the gate found (or did not find) a replica" )
					.tags( common ).tag( "outcome", outcome.tag ).register( registry );
			gateOutcomes[outcome.ordinal()] = counter;
		}
		counter.increment();
		if ( outcome != LsnGate.Outcome.KNOWN ) {
			gateWait.record( nanos, TimeUnit.NANOSECONDS );
		}
	}

	void markerError(String operation) {
		Counter.builder( "hibernate.routing.redis.errors" ).description( "Failures to read, store or raise the Redis mutation marker" )
				.tags( common ).tag( "operation", operation ).register( registry ).increment();
	}

	void stampError() {
		stampErrors.increment();
	}

	/** Removes the gauges, which would otherwise keep reporting this (closed) unit's replicas. */
	void close() {
		gauges.forEach( registry::remove );
		gauges.clear();
	}

	private Counter counter(Counter[] cache, String name, String description, RouteReason reason) {
		Counter counter = cache[reason.ordinal()];
		if ( counter == null ) {
			counter = Counter.builder( name ).description( description ).tags( common ).tag( "reason", reason.tag ).register( registry );
			cache[reason.ordinal()] = counter;
		}
		return counter;
	}
}
