package io.github.hibernaterouting.it.matrix;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * The history of one cell, in the spirit of Jepsen: every operation is recorded with its timing and
 * outcome while the actors run, and the properties are checked afterwards, over the whole history,
 * against the final state read from the primary. {@link #record} is thread-safe.
 */
public final class MatrixHistory {
    /** The violation kinds, in the order of the report's columns. */
    public static final List<String> KINDS = List.of(
            "read-your-writes",
            "monotonic-reads",
            "lost-increment",
            "lost-collection-add",
            "duplicate",
            "snapshot",
            "unexpected-error");

    public enum Kind {
        /** {@code find} of the thread's own {@link Counter}, {@code value++}, commit; value: the new value. */
        WRITE_OWN(true),
        /** A read of the actor's own row (the thread's or its twin's) in a new unit of work: checked for read-your-writes. */
        READ_OWN(false),
        /** A read under {@code STALE_READ}: counted, not checked. */
        READ_STALE(false),
        /** One of several reads of one row in one unit of work: checked for monotonic reads. */
        READ_UNIT(false),
        /** {@code find} of a shared counter, {@code value++}, commit; value: the new value, before: what was read. */
        INCREMENT(true),
        /** An element added to the shared bag of a {@link Board}; object: the element, before: the bag's size as loaded. */
        ADD(true),
        /** Read a row twice, then {@code update … set value = value + 1 returning value}, in one transaction. */
        SNAPSHOT(true);

        final boolean mutation;

        Kind(boolean mutation) {
            this.mutation = mutation;
        }
    }

    /** How an operation ended, as its caller knows it. */
    public enum Outcome {
        /** Acknowledged: the commit returned (a read returned). */
        OK,
        /** Failed before its commit, or its commit was refused (a version or snapshot conflict): not applied. */
        FAILED,
        /** Failed in its commit for another reason: the caller does not know whether it was applied. */
        UNKNOWN
    }

    /** What a failure was, from the exception the caller saw. */
    public enum ErrorKind {
        /** SQLSTATE class 08 or 57P01: a connection that failed, a stopped standby, {@code replica_failure=FAIL}. */
        CONNECTION,
        /** {@code OptimisticLockException}: a version check, or the library's {@code StaleReplicaReadException}. */
        OPTIMISTIC,
        /** SQLSTATE 40001: a REPEATABLE READ transaction's update of a row changed since its snapshot. */
        SERIALIZATION,
        /** {@code ConsistencyMarkerException}: Redis could not store the marker, so the mutation did not run. */
        MARKER,
        /** Anything else: always a violation. */
        OTHER
    }

    /**
     * One operation.
     *
     * @param thread the actor thread
     * @param actor the actor key of its scope
     * @param kind what it did
     * @param unit its unit of work (unique in the history)
     * @param object what it read or wrote: {@code counter:3}, {@code shared}, {@code versioned}, {@code snapshot:1},
     *     or the added element
     * @param value the value read or written; -1 if it failed
     * @param before for {@link Kind#INCREMENT} and {@link Kind#SNAPSHOT}: the value the transaction read first
     * @param before2 for {@link Kind#SNAPSHOT}: the value its second read returned; for {@link Kind#ADD}: the board
     * @param node the server that loaded what was read ({@code primary}, {@code standby1}, …), or null
     * @param path how it read: {@code find}, {@code find (the cache had the key)}, {@code query}, {@code query (cacheable)}, {@code native}
     * @param errorKind null if it did not fail
     * @param error the failure as the caller saw it (SQLSTATE, exception, message)
     */
    public record Op(
            int thread,
            String actor,
            Kind kind,
            long unit,
            String object,
            long value,
            long before,
            long before2,
            String node,
            String path,
            long startNanos,
            long endNanos,
            Outcome outcome,
            ErrorKind errorKind,
            String error) {
        public boolean ok() {
            return outcome == Outcome.OK;
        }

        boolean onReplica() {
            return node != null && !node.equals("primary");
        }

        String where() {
            return (node == null ? "?" : node) + (path == null ? "" : " by " + path);
        }
    }

    /** A property the history breaks. */
    public record Violation(String kind, String detail) {}

    /** What the primary holds at the end: each counter's value (by object), the bag's elements. */
    public record FinalState(Map<String, Long> values, List<String> notes) {}

    private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final AtomicInteger others = new AtomicInteger();
    private final AtomicInteger replicaReads = new AtomicInteger();

    public void record(Op op) {
        ops.add(op);
        size.incrementAndGet();
        if (op.errorKind() == ErrorKind.OTHER) {
            others.incrementAndGet();
        }
        if (served(op) && op.onReplica()) {
            replicaReads.incrementAndGet();
        }
    }

    /** A read that returned, with a known server. */
    private static boolean served(Op op) {
        return !op.kind().mutation && op.ok() && op.node() != null;
    }

    /** How many failures were recorded that no operation may have (each one is an unexpected-error violation). */
    public int unexpectedErrors() {
        return others.get();
    }

    /** How many operations were recorded so far. */
    public int size() {
        return size.get();
    }

    public List<Op> ops() {
        return List.copyOf(ops);
    }

    /**
     * Checks the history against the final state on the primary (every counter starts at 0).
     *
     * @param repeatableRead whether the cell's transactions are REPEATABLE READ: then each one must see one snapshot
     */
    public List<Violation> check(FinalState end, boolean repeatableRead) {
        final List<Op> all =
                ops().stream().sorted(Comparator.comparingLong(Op::startNanos)).toList();
        final List<Violation> violations = new ArrayList<>();
        readYourWrites(all, violations);
        monotonicReads(all, violations);
        increments(all, end, violations);
        collection(all, end, violations);
        if (repeatableRead) {
            snapshots(all, violations);
        }
        unexpectedErrors(all, violations);
        return violations;
    }

    /** A read of an actor's row returns at least the latest write to it acknowledged before the read started. */
    private static void readYourWrites(List<Op> all, List<Violation> violations) {
        final Map<String, List<Op>> writes = all.stream()
                .filter(op -> op.kind() == Kind.WRITE_OWN && op.ok())
                .collect(Collectors.groupingBy(Op::object));
        for (Op read : all) {
            if (read.kind() != Kind.READ_OWN || !read.ok()) {
                continue;
            }
            Op required = null;
            for (Op write : writes.getOrDefault(read.object(), List.of())) {
                if (write.endNanos() < read.startNanos() && (required == null || write.value() > required.value())) {
                    required = write;
                }
            }
            if (required != null && read.value() < required.value()) {
                violations.add(new Violation(
                        "read-your-writes",
                        read.actor() + " (thread " + read.thread() + ") read " + read.object() + " = " + read.value()
                                + " from " + read.where() + ", " + millis(read.startNanos() - required.endNanos())
                                + " ms after the write of " + required.value() + " by thread " + required.thread()
                                + " was acknowledged"
                                + ("primary".equals(read.node())
                                        ? " (the primary itself no longer had it: the write was lost, see lost-increment)"
                                        : "")));
            }
        }
    }

    /** Within one unit of work, reads of a row never go back. */
    private static void monotonicReads(List<Op> all, List<Violation> violations) {
        final Map<Long, List<Op>> units = all.stream()
                .filter(op -> op.kind() == Kind.READ_UNIT && op.ok())
                .collect(Collectors.groupingBy(Op::unit, TreeMap::new, Collectors.toList()));
        for (List<Op> unit : units.values()) {
            for (int i = 1; i < unit.size(); i++) {
                final Op before = unit.get(i - 1);
                final Op after = unit.get(i);
                if (after.value() < before.value()) {
                    violations.add(new Violation(
                            "monotonic-reads",
                            "unit " + after.unit() + " of " + after.actor() + " read " + after.object() + " = "
                                    + before.value() + " from " + before.where() + ", then " + after.value()
                                    + " from " + after.where()));
                }
            }
        }
    }

    /**
     * Every counter ends at its number of acknowledged increments, plus at most those whose outcome the
     * caller does not know; acknowledged values are never given twice.
     */
    private static void increments(List<Op> all, FinalState end, List<Violation> violations) {
        final Map<String, List<Op>> byObject = all.stream()
                .filter(op -> op.kind().mutation && op.kind() != Kind.ADD)
                .collect(Collectors.groupingBy(Op::object, TreeMap::new, Collectors.toList()));
        final Set<String> objects = new HashSet<>(byObject.keySet());
        objects.addAll(end.values().keySet());
        for (String object : objects.stream().sorted().toList()) {
            final List<Op> mutations = byObject.getOrDefault(object, List.of());
            final long acknowledged = mutations.stream().filter(Op::ok).count();
            final long unknown = mutations.stream()
                    .filter(op -> op.outcome() == Outcome.UNKNOWN)
                    .count();
            final long value = end.values().getOrDefault(object, 0L);
            if (value < acknowledged || value > acknowledged + unknown) {
                violations.add(new Violation(
                        "lost-increment",
                        object + " ends at " + value + " on the primary after " + acknowledged
                                + " acknowledged increments and " + unknown + " of unknown outcome"
                                + (value < acknowledged ? "" : " (more than acknowledged: a failed one was applied)")));
            }
            final Map<Long, Op> given = new HashMap<>();
            for (Op op : mutations) {
                if (!op.ok()) {
                    continue;
                }
                final Op earlier = given.putIfAbsent(op.value(), op);
                if (earlier != null) {
                    violations.add(new Violation(
                            "duplicate",
                            object + " = " + op.value() + " acknowledged twice: to thread " + earlier.thread() + " ("
                                    + describeRead(earlier) + ") and to thread " + op.thread() + " ("
                                    + describeRead(op) + ")"));
                }
            }
        }
    }

    private static String describeRead(Op op) {
        return op.kind() == Kind.WRITE_OWN || op.kind() == Kind.INCREMENT
                ? "it had read " + op.before() + " from " + op.where()
                : "it had read " + op.before() + " and " + op.before2() + " from " + op.where();
    }

    /** Every acknowledged add is in the bag once; an add that failed before its commit is not in it. */
    private static void collection(List<Op> all, FinalState end, List<Violation> violations) {
        final Map<String, Long> present =
                end.notes().stream().collect(Collectors.groupingBy(n -> n, LinkedHashMap::new, Collectors.counting()));
        for (Op add : all) {
            if (add.kind() != Kind.ADD) {
                continue;
            }
            final long count = present.getOrDefault(add.object(), 0L);
            if (add.ok() && count == 0) {
                violations.add(new Violation(
                        "lost-collection-add",
                        "the acknowledged add of " + add.object() + " by thread " + add.thread()
                                + " is not in the bag on the primary" + overwrittenBy(all, add)));
            } else if (add.outcome() == Outcome.FAILED && count > 0) {
                violations.add(new Violation(
                        "lost-collection-add",
                        add.object() + " is in the bag although its add failed before commit: " + add.error()));
            }
            if (count > 1) {
                violations.add(
                        new Violation("duplicate", add.object() + " is " + count + " times in the bag on the primary"));
            }
        }
    }

    /** The first later acknowledged add to the same bag that loaded it without {@code lost}: what wrote it away. */
    private static String overwrittenBy(List<Op> all, Op lost) {
        return all.stream()
                .filter(op -> op.kind() == Kind.ADD
                        && op.ok()
                        && op.before2() == lost.before2()
                        && op.startNanos() > lost.endNanos()
                        && op.before() < lost.value())
                .findFirst()
                .map(op -> "; the next add of thread " + op.thread() + " loaded " + op.before() + " elements (at least "
                        + lost.value() + " were there) by " + op.where())
                .orElse("");
    }

    /** A REPEATABLE READ transaction reads one snapshot: its two reads agree, and its increment builds on them. */
    private static void snapshots(List<Op> all, List<Violation> violations) {
        for (Op op : all) {
            if (op.kind() == Kind.SNAPSHOT
                    && op.ok()
                    && (op.before() != op.before2() || op.value() != op.before() + 1)) {
                violations.add(new Violation(
                        "snapshot",
                        "a REPEATABLE READ transaction of thread " + op.thread() + " read " + op.object() + " = "
                                + op.before() + ", then " + op.before2() + " (from " + op.where()
                                + "), and its increment returned " + op.value()));
            }
        }
    }

    /** Failures a caller may see: connections (a stopped standby, FAIL); for mutations also conflicts and Redis refusals. */
    private static void unexpectedErrors(List<Op> all, List<Violation> violations) {
        for (Op op : all) {
            if (op.errorKind() == null || op.errorKind() == ErrorKind.CONNECTION) {
                continue;
            }
            if (op.kind().mutation && op.errorKind() != ErrorKind.OTHER) {
                continue;
            }
            violations.add(new Violation(
                    "unexpected-error", op.kind() + " of thread " + op.thread() + " failed: " + op.error()));
        }
    }

    private static long millis(long nanos) {
        return nanos / 1_000_000;
    }

    /** Reads that returned (own, stale, in units of work), with a known server. */
    public List<Op> servedReads() {
        return ops().stream().filter(MatrixHistory::served).toList();
    }

    /** How many served reads a replica served so far. */
    public long replicaReads() {
        return replicaReads.get();
    }

    /** The share of served reads a replica served (what the cache holds counts as what loaded it), in percent. */
    public double offload() {
        final List<Op> reads = servedReads();
        return reads.isEmpty() ? 0 : 100.0 * replicaReads() / reads.size();
    }

    /** The counts a cell prints: operations, outcomes, where reads were served, errors, violations by kind. */
    public String summary(List<Violation> violations) {
        final List<Op> all = ops();
        final StringBuilder text = new StringBuilder();
        final Map<Kind, Long> byKind =
                all.stream().collect(Collectors.groupingBy(Op::kind, TreeMap::new, Collectors.counting()));
        final Map<Kind, Long> failed = all.stream()
                .filter(op -> !op.ok())
                .collect(Collectors.groupingBy(Op::kind, TreeMap::new, Collectors.counting()));
        text.append(String.format("ops %d by kind %s; not acknowledged %s%n", all.size(), byKind, failed));
        final List<Op> reads = servedReads();
        text.append(String.format(
                "reads served by replicas: %d of %d (%.1f%%); by node: %s%n",
                replicaReads(),
                reads.size(),
                offload(),
                reads.stream().collect(Collectors.groupingBy(Op::node, TreeMap::new, Collectors.counting()))));
        final Map<String, Long> errors = all.stream()
                .filter(op -> op.errorKind() != null)
                .collect(Collectors.groupingBy(
                        op -> op.kind() + " " + op.errorKind() + " " + op.outcome(),
                        TreeMap::new,
                        Collectors.counting()));
        text.append("errors: ").append(errors).append('\n');
        all.stream()
                .filter(op -> op.errorKind() != null)
                .map(op -> op.errorKind() + ": " + op.error())
                .distinct()
                .limit(8)
                .forEach(e -> text.append("  e.g. ").append(e).append('\n'));
        text.append("violations by kind: ").append(countByKind(violations)).append('\n');
        violations.stream()
                .limit(20)
                .forEach(v -> text.append("  ")
                        .append(v.kind())
                        .append(": ")
                        .append(v.detail())
                        .append('\n'));
        return text.toString();
    }

    public static Map<String, Long> countByKind(List<Violation> violations) {
        return violations.stream().collect(Collectors.groupingBy(Violation::kind, TreeMap::new, Collectors.counting()));
    }
}
