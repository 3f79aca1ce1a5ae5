package io.github.hibernaterouting.it;

import static io.github.hibernaterouting.it.ItSupport.isConnectionFailure;

import io.github.hibernaterouting.testkit.Node;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A history of operations on per-actor counters, in the spirit of Jepsen: every operation is
 * recorded with its timing and outcome while the system runs, and the consistency properties are
 * checked afterwards, over the whole history, against the final state read from the primary.
 *
 * <p>Operations of one actor run on one thread, one after the other; {@link #record} is thread-safe.
 */
final class History {
    enum Kind {
        /** {@code update counters set value = value + 1 … returning value} in a transaction, in the actor's scope. */
        WRITE,
        /** A read of the actor's own counter in a new unit of work (new EntityManager, new scope of the actor). */
        READ_OWN,
        /** One of several reads of another actor's counter in one unit of work. */
        READ_IN_UNIT
    }

    /**
     * One operation.
     *
     * @param actor the actor's index
     * @param kind what it did
     * @param unit the unit of work it belongs to (unique per history)
     * @param row the index of the actor whose counter was written or read
     * @param value the value written ({@code returning value}) or read; -1 after an error
     * @param node the server that ran the statement, by {@code inet_server_port()}; null after an error
     * @param sqlState null if acknowledged, else the SQLSTATE the caller saw
     */
    record Op(
            int actor,
            Kind kind,
            long unit,
            int row,
            long value,
            Node node,
            long startNanos,
            long endNanos,
            String sqlState) {
        boolean ok() {
            return sqlState == null;
        }
    }

    /** A property the history breaks. */
    record Violation(String kind, String detail) {}

    private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final AtomicInteger replicaReads = new AtomicInteger();

    void record(Op op) {
        ops.add(op);
        size.incrementAndGet();
        if (op.kind() != Kind.WRITE && op.ok() && !op.node().isPrimary()) {
            replicaReads.incrementAndGet();
        }
    }

    /** How many operations were recorded so far. */
    int size() {
        return size.get();
    }

    /** How many reads a replica served so far. */
    int replicaReads() {
        return replicaReads.get();
    }

    List<Op> ops() {
        return List.copyOf(ops);
    }

    /**
     * Checks the history against the final counter values on the primary ({@code finalValues[actor]}).
     * <ul>
     * <li>read-your-writes: a read of an actor's own counter is at least the value of that actor's
     * latest write acknowledged before the read started;</li>
     * <li>no lost increment: the final value equals the number of acknowledged increments (plus at
     * most the writes whose outcome the caller never learned), and acknowledged values rise by one;</li>
     * <li>monotonic reads: within one unit of work, reads of a row never go back;</li>
     * <li>only connection failures: every error has SQLSTATE class 08 or 57P01.</li>
     * </ul>
     */
    List<Violation> check(long[] finalValues) {
        final List<Violation> violations = new ArrayList<>();
        final Map<Integer, List<Op>> byActor = ops.stream()
                .sorted(Comparator.comparingLong(Op::startNanos))
                .collect(Collectors.groupingBy(Op::actor, TreeMap::new, Collectors.toList()));
        for (int actor = 0; actor < finalValues.length; actor++) {
            final List<Op> actorOps = byActor.getOrDefault(actor, List.of());
            long acknowledged = 0;
            long indeterminate = 0;
            long lastAcknowledgedValue = 0;
            final List<Op> writes = new ArrayList<>();
            for (Op op : actorOps) {
                if (op.kind() == Kind.WRITE) {
                    writes.add(op);
                    if (op.ok()) {
                        acknowledged++;
                    } else {
                        indeterminate++;
                    }
                }
            }
            for (Op op : actorOps) {
                if (op.kind() != Kind.READ_OWN || !op.ok()) {
                    continue;
                }
                long required = 0;
                for (Op write : writes) {
                    if (write.ok() && write.endNanos() < op.startNanos()) {
                        required = Math.max(required, write.value());
                    }
                }
                if (op.value() < required) {
                    violations.add(new Violation(
                            "read-your-writes",
                            "actor " + actor + " read " + op.value() + " from " + op.node() + " after its write of "
                                    + required + " was acknowledged"));
                }
            }
            for (Op write : writes) {
                if (write.ok()) {
                    if (write.value() <= lastAcknowledgedValue) {
                        violations.add(new Violation(
                                "duplicate-increment",
                                "actor " + actor + " got " + write.value() + " after " + lastAcknowledgedValue));
                    }
                    lastAcknowledgedValue = write.value();
                }
            }
            final long finalValue = finalValues[actor];
            if (finalValue < acknowledged || finalValue > acknowledged + indeterminate) {
                violations.add(new Violation(
                        "lost-increment",
                        "actor " + actor + " ends at " + finalValue + " on the primary after " + acknowledged
                                + " acknowledged and " + indeterminate + " unacknowledged increments"));
            }
        }
        final Map<Long, List<Op>> byUnit = ops.stream()
                .filter(op -> op.kind() == Kind.READ_IN_UNIT && op.ok())
                .sorted(Comparator.comparingLong(Op::startNanos))
                .collect(Collectors.groupingBy(Op::unit, TreeMap::new, Collectors.toList()));
        for (List<Op> unit : byUnit.values()) {
            for (int i = 1; i < unit.size(); i++) {
                final Op before = unit.get(i - 1);
                final Op after = unit.get(i);
                if (after.value() < before.value()) {
                    violations.add(new Violation(
                            "monotonic-reads",
                            "unit " + after.unit() + " of actor " + after.actor() + " read row " + after.row() + " as "
                                    + before.value() + " on " + before.node() + ", then " + after.value() + " on "
                                    + after.node()));
                }
            }
        }
        for (Op op : ops) {
            if (!op.ok() && !isConnectionFailure(op.sqlState())) {
                violations.add(new Violation(
                        "unexpected-error", op.kind() + " of actor " + op.actor() + " failed with " + op.sqlState()));
            }
        }
        return violations;
    }

    /** The counts a run prints: operations, outcomes, where reads were served, violations by kind. */
    String summary(List<Violation> violations) {
        final List<Op> all = ops();
        final List<Op> reads =
                all.stream().filter(op -> op.kind() != Kind.WRITE).toList();
        final List<Op> servedReads = reads.stream().filter(Op::ok).toList();
        final long onReplicas =
                servedReads.stream().filter(op -> !op.node().isPrimary()).count();
        final StringBuilder text = new StringBuilder();
        text.append(String.format(
                "ops %d: writes %d (acknowledged %d, failed %d), reads %d (own %d, in units of work %d; failed %d)%n",
                all.size(),
                all.stream().filter(op -> op.kind() == Kind.WRITE).count(),
                all.stream().filter(op -> op.kind() == Kind.WRITE && op.ok()).count(),
                all.stream().filter(op -> op.kind() == Kind.WRITE && !op.ok()).count(),
                reads.size(),
                reads.stream().filter(op -> op.kind() == Kind.READ_OWN).count(),
                reads.stream().filter(op -> op.kind() == Kind.READ_IN_UNIT).count(),
                reads.stream().filter(op -> !op.ok()).count()));
        text.append(String.format(
                "reads served by replicas: %d of %d (%.1f%%); by node: %s%n",
                onReplicas,
                servedReads.size(),
                servedReads.isEmpty() ? 0.0 : 100.0 * onReplicas / servedReads.size(),
                servedReads.stream()
                        .collect(Collectors.groupingBy(op -> op.node().name(), TreeMap::new, Collectors.counting()))));
        final Map<String, Long> errors = all.stream()
                .filter(op -> !op.ok())
                .collect(Collectors.groupingBy(
                        op -> op.kind() + " " + op.sqlState(), TreeMap::new, Collectors.counting()));
        final Map<String, Long> violationCounts = violations.stream()
                .collect(Collectors.groupingBy(Violation::kind, TreeMap::new, Collectors.counting()));
        text.append("errors by SQLSTATE: ").append(errors).append('\n');
        text.append("violations by kind: ").append(violationCounts).append('\n');
        violations.stream()
                .limit(20)
                .forEach(v -> text.append("  ")
                        .append(v.kind())
                        .append(": ")
                        .append(v.detail())
                        .append('\n'));
        return text.toString();
    }
}
