package io.github.hibernaterouting.routing.internal.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * The library's Micrometer meters. Counters are created on first use and kept in arrays, so that
 * recording a routing decision is an array read and an increment.
 *
 * <p>Nodes are numbered: {@link #PRIMARY} is the primary, {@code 1 + i} the replica at index
 * {@code i}. No meter carries SQL, parameter values, URLs or credentials: tags are node names and
 * reasons. Thread-safe.
 */
public final class RoutingMetrics {
    /** The node number of the primary. */
    public static final int PRIMARY = 0;

    public static final String STATEMENTS = "hibernate.routing.statements";
    public static final String ESCALATIONS = "hibernate.routing.escalations";
    public static final String FALLBACKS = "hibernate.routing.fallbacks";
    public static final String REPLICA_FAILURES = "hibernate.routing.replica.failures";
    public static final String REPLICA_BUSY = "hibernate.routing.replica.busy";
    public static final String STAMPS_DROPPED = "hibernate.routing.actor_stamps.dropped";

    /** How a wait for a WAL position ended; the value is the {@code outcome} tag of the meters. */
    public enum GateOutcome {
        /** A replica was already known to be far enough. */
        KNOWN("known"),
        /** Asking the replicas once found one. */
        CHECKED("checked"),
        /** One got there during the wait. */
        WAITED("waited"),
        /** None got there in time. */
        TIMED_OUT("timed-out"),
        /** None had moved since a wait last timed out: not waited for. */
        STALLED("stalled");

        final String tag;

        GateOutcome(String tag) {
            this.tag = tag;
        }
    }

    private final MeterRegistry registry;
    private final String[] nodeNames;
    private final Counter[][] statements;
    private final Counter[] escalations = new Counter[RouteReason.values().length];
    private final Counter[] fallbacks = new Counter[RouteReason.values().length];
    private final Counter[] replicaFailures;
    private final Counter[] replicaBusy;
    private final Counter[] gateOutcomes = new Counter[GateOutcome.values().length];
    private final Timer gateWait;
    private final Counter stampReadErrors;
    private final Counter stampAdvanceErrors;
    private volatile Counter redisRejected;

    private final Counter stampsDeferred;
    private final Counter stampsDropped;
    private final DecisionLog decisions = new DecisionLog();
    /**
     * Per-node counts for {@code RoutingStatus}, kept here and not read back from the meters: with
     * no registry attached (the global registry's default), Micrometer counters count nothing.
     */
    private final LongAdder[] reads;

    private final LongAdder[] writes;

    private final Tags common;
    private final List<Meter> gauges = new ArrayList<>();

    /**
     * @param registry where meters are registered
     * @param persistenceUnit the tag that keeps several persistence units in one JVM apart
     * @param replicaNames the replicas' names, in index order
     */
    public RoutingMetrics(MeterRegistry registry, String persistenceUnit, List<String> replicaNames) {
        this.registry = registry;
        // Several persistence units in one JVM must not share (or silently drop) each other's meters.
        this.common = Tags.of("persistence_unit", persistenceUnit);
        nodeNames = new String[replicaNames.size() + 1];
        nodeNames[PRIMARY] = "primary";
        for (int i = 0; i < replicaNames.size(); i++) {
            nodeNames[i + 1] = replicaNames.get(i);
        }
        statements = new Counter[nodeNames.length][RouteReason.values().length];
        reads = new LongAdder[nodeNames.length];
        writes = new LongAdder[nodeNames.length];
        for (int i = 0; i < nodeNames.length; i++) {
            reads[i] = new LongAdder();
            writes[i] = new LongAdder();
        }
        replicaFailures = new Counter[replicaNames.size()];
        replicaBusy = new Counter[replicaNames.size()];
        gateWait = Timer.builder("hibernate.routing.lsn_gate.wait")
                .description("Time units of work spent waiting for a replica to reach their required WAL position")
                .tags(common)
                .register(registry);
        stampReadErrors = stampErrors("read");
        stampAdvanceErrors = stampErrors("advance");
        stampsDeferred = Counter.builder("hibernate.routing.actor_stamps.deferred")
                .description("Stamps that could not be raised in the actors' table at once because another transaction"
                        + " held the actor's row, and were raised later instead")
                .tags(common)
                .register(registry);
        stampsDropped = Counter.builder(STAMPS_DROPPED)
                .description("Actors' stamps dropped from this instance's memory at its capacity before their time to"
                        + " live ended; the segment's actors then need a replica at the dropped position")
                .tags(common)
                .register(registry);
    }

    private Counter stampErrors(String operation) {
        return Counter.builder("hibernate.routing.actor_stamps.errors")
                .description(
                        "Failures to read an actor's stamp from the actors' table, or to advance it after a commit")
                .tags(common)
                .tag("operation", operation)
                .register(registry);
    }

    /** The registry meters are recorded in. */
    public MeterRegistry registry() {
        return registry;
    }

    /** Registers a gauge of one replica, removed again by {@link #close()}. */
    public <T> void replicaGauge(
            String name, String description, String baseUnit, int node, T state, ToDoubleFunction<T> value) {
        gauges.add(Gauge.builder(name, state, value)
                .description(description)
                .baseUnit(baseUnit)
                .tags(common)
                .tag("node", nodeNames[node])
                .register(registry));
    }

    /** Counts one statement run on {@code node} for {@code reason}. */
    public void statement(int node, RouteReason reason) {
        Counter counter = statements[node][reason.ordinal()];
        if (counter == null) {
            counter = Counter.builder(STATEMENTS)
                    .description("Statements routed, by serving node and reason")
                    .tags(common)
                    .tag("target", node == PRIMARY ? "primary" : "replica")
                    .tag("node", nodeNames[node])
                    .tag("reason", reason.tag)
                    .register(registry);
            statements[node][reason.ordinal()] = counter;
        }
        counter.increment();
        (reason == RouteReason.WRITE || reason == RouteReason.RAW_JDBC ? writes : reads)[node].increment();
        decisions.record(node, reason);
    }

    /** Statements counted for {@code node}: writes if {@code writes}, else reads. */
    public long statements(int node, boolean writes) {
        return (writes ? this.writes : this.reads)[node].sum();
    }

    /** The name of node {@code node}: {@code primary}, {@code replica1}, … */
    public String nodeName(int node) {
        return nodeNames[node];
    }

    /** The latest decisions, for a status page. */
    public DecisionLog decisions() {
        return decisions;
    }

    public void escalation(RouteReason reason) {
        counter(escalations, ESCALATIONS, "Units of work moved to the primary for the rest of their life", reason)
                .increment();
    }

    public void fallback(RouteReason reason) {
        counter(fallbacks, FALLBACKS, "Reads that wanted a replica and went to the primary", reason)
                .increment();
    }

    /** Counts a failure of replica {@code node} to give a connection. */
    public void replicaFailure(int node) {
        Counter counter = replicaFailures[node - 1];
        if (counter == null) {
            counter = Counter.builder(REPLICA_FAILURES)
                    .description("Failures to get a connection from a replica")
                    .tags(common)
                    .tag("node", nodeNames[node])
                    .register(registry);
            replicaFailures[node - 1] = counter;
        }
        counter.increment();
    }

    /** Counts a borrow from replica {@code node}'s pool that timed out with every connection in use. */
    public void replicaBusy(int node) {
        Counter counter = replicaBusy[node - 1];
        if (counter == null) {
            counter = Counter.builder(REPLICA_BUSY)
                    .description("Connections a replica's pool could not give in time because all were in use")
                    .tags(common)
                    .tag("node", nodeNames[node])
                    .register(registry);
            replicaBusy[node - 1] = counter;
        }
        counter.increment();
    }

    /** Counts a check of the LSN gate and, unless the position was already known, the time it took. */
    public void gate(GateOutcome outcome, long nanos) {
        Counter counter = gateOutcomes[outcome.ordinal()];
        if (counter == null) {
            counter = Counter.builder("hibernate.routing.lsn_gate")
                    .description(
                            "Units of work that needed a WAL position, by how the gate found (or did not find) a replica")
                    .tags(common)
                    .tag("outcome", outcome.tag)
                    .register(registry);
            gateOutcomes[outcome.ordinal()] = counter;
        }
        counter.increment();
        if (outcome != GateOutcome.KNOWN) {
            gateWait.record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    public void markerError(String operation) {
        Counter.builder("hibernate.routing.redis.errors")
                .description("Failures to read, store or raise the Redis mutation marker")
                .tags(common)
                .tag("operation", operation)
                .register(registry)
                .increment();
    }

    /** Registers the gauge of the Redis marker's circuit breaker (0 closed, 1 open, 2 half-open), removed by {@link #close()}. */
    public <T> void redisCircuit(T breaker, ToDoubleFunction<T> state) {
        gauges.add(Gauge.builder("hibernate.routing.redis.circuit.state", breaker, state)
                .description("The Redis marker's circuit breaker: 0 closed, 1 open, 2 half-open")
                .tags(common)
                .register(registry));
    }

    /** Counts a marker command that the open breaker failed at once, without asking Redis. */
    public void redisRejected() {
        Counter counter = redisRejected;
        if (counter == null) {
            // Registered on first use: an application without Redis shows no Redis meter.
            counter = Counter.builder("hibernate.routing.redis.rejected")
                    .description("Redis marker commands failed at once, without asking Redis, while its circuit"
                            + " breaker was open after a failure")
                    .tags(common)
                    .register(registry);
            redisRejected = counter;
        }
        counter.increment();
    }

    /** A failure to {@code read} an actor's stamp from the actors' table, or to {@code advance} it after a commit. */
    public void stampError(String operation) {
        ("read".equals(operation) ? stampReadErrors : stampAdvanceErrors).increment();
    }

    /** A stamp was deferred: the actor's row was locked; see {@code ActorStamps}. */
    public void stampDeferred() {
        stampsDeferred.increment();
    }

    /** {@code count} actors' stamps dropped from memory at capacity before their time to live ended. */
    public void stampsDropped(int count) {
        if (count > 0) {
            stampsDropped.increment(count);
        }
    }

    /** Removes the gauges, which would otherwise keep reporting this (closed) unit's replicas. */
    public void close() {
        gauges.forEach(registry::remove);
        gauges.clear();
    }

    private Counter counter(Counter[] cache, String name, String description, RouteReason reason) {
        Counter counter = cache[reason.ordinal()];
        if (counter == null) {
            counter = Counter.builder(name)
                    .description(description)
                    .tags(common)
                    .tag("reason", reason.tag)
                    .register(registry);
            cache[reason.ordinal()] = counter;
        }
        return counter;
    }
}
