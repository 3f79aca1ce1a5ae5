package io.github.hibernaterouting.it.matrix;

import io.github.hibernaterouting.it.matrix.MatrixHistory.ErrorKind;
import io.github.hibernaterouting.it.matrix.MatrixHistory.Kind;
import io.github.hibernaterouting.it.matrix.MatrixHistory.Op;
import io.github.hibernaterouting.it.matrix.MatrixHistory.Outcome;
import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.TypedQuery;
import java.sql.Connection;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.StatelessSession;
import org.hibernate.jpa.HibernateHints;

/**
 * The operations of a cell's actor threads. Twelve threads, two per actor key ("a user with two
 * tabs"): each thread has its own counter row and reads its own and its twin's, so two mutations of
 * one actor often run at once. Every choice is drawn from the thread's seeded {@link Random} before
 * the operation runs, so a seed replays the same operations whatever their outcomes.
 */
final class MatrixWorkload {
    static final int THREADS = 12;
    static final int SNAPSHOT_ROWS = 3;
    static final int UNEXPECTED_ERRORS_TO_STOP = 10;
    static final int SHARED_ID = 1;
    /** Boards 1 to 3, each with its own bag and lock: smaller bags, less waiting on the test's locks. */
    static final int BOARDS = 3;

    /** Which operations the threads draw. */
    enum Mix {
        /** Every operation (see {@link #runOp}). */
        FULL,
        /** Only increments of the shared counters (a self-test). */
        INCREMENTS
    }

    /**
     * @param serialize whether the read-modify-write operations on the unversioned shared counter and on the bag
     *     take a lock of the test's, so that on a single server they could not lose an update
     */
    record Options(
            Cell cell,
            List<EntityManagerFactory> instances,
            long seed,
            int minOps,
            int maxOps,
            boolean serialize,
            Mix mix) {
        int expectedOps() {
            return THREADS * (minOps + maxOps) / 2;
        }
    }

    /** How a read-modify-write operation loads its entity. */
    private enum Load {
        /** {@code find}, under the default strategy. */
        DEFAULT,
        /** A query with the {@code STALE_READ} hint. */
        HINT,
        /** {@code find} in a scope whose strategy is {@code STALE_READ}. */
        SCOPE
    }

    private final PostgresCluster cluster;
    private final Options options;
    private final MatrixHistory history;
    private final boolean cached;
    private final boolean repeatableRead;
    private final ReentrantLock sharedLock = new ReentrantLock();
    private final List<ReentrantLock> boardLocks =
            List.of(new ReentrantLock(), new ReentrantLock(), new ReentrantLock());
    private final AtomicLong units = new AtomicLong();
    private final AtomicInteger done = new AtomicInteger();
    private volatile long budgetDeadline = Long.MAX_VALUE;
    private volatile String stoppedEarly;

    MatrixWorkload(PostgresCluster cluster, Options options, MatrixHistory history) {
        this.cluster = cluster;
        this.options = options;
        this.history = history;
        this.cached = options.cell().cache() == Cell.Cache.ON;
        this.repeatableRead = options.cell().isolation() == Cell.Isolation.REPEATABLE_READ;
    }

    static String actor(int thread) {
        return "actor-" + thread / 2;
    }

    static int twin(int thread) {
        return thread ^ 1;
    }

    static String counter(int row) {
        return "counter:" + row;
    }

    /**
     * Runs every thread to its end; {@code faults} (if not null) runs meanwhile. Past its own operations, a thread
     * goes on (drawing from the same seeded sequence) while {@code more} says so: until the faults were injected
     * while it ran and the replicas served enough reads, however fast the machine runs the operations. The threads
     * start no new operation after {@code budgetSeconds}, or once {@link #UNEXPECTED_ERRORS_TO_STOP} unexpected
     * errors were recorded (the cell fails anyway, and a pool deadlock would otherwise cost seconds per operation).
     */
    void run(MatrixFaults faults, BooleanSupplier more, long budgetSeconds, long timeoutSeconds) throws Exception {
        budgetDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(budgetSeconds);
        final ExecutorService executor = Executors.newFixedThreadPool(THREADS);
        final CountDownLatch go = new CountDownLatch(1);
        final List<Future<?>> threads = new ArrayList<>();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        try {
            for (int thread = 0; thread < THREADS; thread++) {
                final int t = thread;
                threads.add(executor.submit(() -> {
                    go.await();
                    runThread(t, more);
                    return null;
                }));
            }
            if (faults != null) {
                faults.start();
            }
            go.countDown();
            for (Future<?> f : threads) {
                try {
                    f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError(
                            "the actors did not finish within " + timeoutSeconds
                                    + " s (a stall: a pool deadlock, a lock never released?); "
                                    + (faults == null ? "no faults" : "faults: " + faults.describe()) + "; "
                                    + options.instances().stream()
                                            .map(RoutingTestSupport::routingState)
                                            .toList(),
                            e);
                }
            }
        } finally {
            if (faults != null) {
                faults.finish();
            }
            executor.shutdownNow();
        }
    }

    private void runThread(int thread, BooleanSupplier more) {
        final Random random = new Random(options.seed() * 31 + thread);
        final int ops = options.minOps() + random.nextInt(options.maxOps() - options.minOps() + 1);
        for (int i = 0; i < ops || more.getAsBoolean(); i++) {
            if (history.unexpectedErrors() >= UNEXPECTED_ERRORS_TO_STOP) {
                stoppedEarly = "stopped early: " + UNEXPECTED_ERRORS_TO_STOP + " unexpected errors";
                return;
            }
            if (System.nanoTime() > budgetDeadline) {
                stoppedEarly = "stopped early: time budget";
                return;
            }
            final EntityManagerFactory emf =
                    options.instances().get(random.nextInt(options.instances().size()));
            final int dice = options.mix() == Mix.INCREMENTS ? 60 : random.nextInt(100);
            final long start = System.nanoTime();
            try {
                runOp(random, emf, thread, dice);
            } catch (RuntimeException | Error e) {
                // Anything an operation let escape (closing a scope or an EntityManager, a bug of the test).
                history.record(new Op(
                        thread,
                        actor(thread),
                        Kind.READ_OWN,
                        units.incrementAndGet(),
                        "escaped",
                        -1,
                        -1,
                        -1,
                        null,
                        null,
                        start,
                        System.nanoTime(),
                        Outcome.FAILED,
                        ErrorKind.OTHER,
                        "escaped the operation: " + Failures.describe(e)));
            }
            done.incrementAndGet();
        }
    }

    /** Why the threads stopped before their last operation, or null. */
    String stoppedEarly() {
        return stoppedEarly;
    }

    /** How many operations the threads have run (a unit of work with several reads counts once). */
    int done() {
        return done.get();
    }

    /** The mix: 22 % own writes, 20+8 % own reads, 14 % units of work, 12 % shared increments, 10 % adds, 10 % snapshots, 4 % evictions. */
    private void runOp(Random random, EntityManagerFactory emf, int thread, int dice) {
        if (dice < 22) {
            writeOwn(random, emf, thread);
        } else if (dice < 42 || (dice >= 88 && dice < 96)) {
            readOwn(random, emf, thread);
        } else if (dice < 56) {
            readUnit(random, emf, thread);
        } else if (dice < 68) {
            increment(random, emf, thread);
        } else if (dice < 78) {
            add(random, emf, thread);
        } else if (dice < 88) {
            snapshot(random, emf, thread);
        } else {
            evict(random, emf, thread);
        }
    }

    private Load load(Random random) {
        final int draw = random.nextInt(4);
        if (options.cell().reads() != Cell.Reads.STALE_READ || draw < 2) {
            return Load.DEFAULT;
        }
        return draw == 2 ? Load.HINT : Load.SCOPE;
    }

    private static RoutingScope scope(int thread, Strategy strategy) {
        return RoutingScope.builder().actor(actor(thread)).strategy(strategy).open();
    }

    /** Begins a transaction at the cell's isolation level, set on the connection before {@code begin} as Spring does. */
    private void begin(EntityManager em) {
        if (repeatableRead) {
            em.unwrap(Session.class)
                    .doWork(connection -> connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ));
        }
        em.getTransaction().begin();
    }

    private static void rollbackQuietly(EntityManager em) {
        try {
            if (em.getTransaction().isActive()) {
                em.getTransaction().rollback();
            }
        } catch (RuntimeException ignored) {
            // The failure that made the rollback necessary is what is recorded.
        }
    }

    private String node(Integer port) {
        return port == null ? null : cluster.nodeForPort(port).name();
    }

    private <T> T load(EntityManagerFactory emf, EntityManager em, Class<T> type, int id, Load load, String fetch) {
        final T found = load != Load.HINT
                ? em.find(type, id)
                : em
                        .createQuery("select e from " + type.getSimpleName() + " e" + fetch + " where e.id = :id", type)
                        .setParameter("id", id)
                        .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.STALE_READ))
                        .getResultList()
                        .stream()
                        .findFirst()
                        .orElse(null);
        if (found == null) {
            throw notFound(emf, em, type, id);
        }
        return found;
    }

    /**
     * A {@code find} that returned null. Inside a transaction that a failed statement marked rollback-only,
     * that is how Hibernate reports a JDBC failure of the load ({@code SessionImpl.find}, HHH-12472): the
     * failure of a replica that died under the load. Otherwise the row, which exists from the start of the
     * cell, was missing where the load ran.
     */
    private RuntimeException notFound(EntityManagerFactory emf, EntityManager em, Class<?> type, int id) {
        if (em.getTransaction().isActive() && em.getTransaction().getRollbackOnly()) {
            return new Failures.HiddenFailure(type.getSimpleName() + " " + id
                    + " not found in a transaction marked rollback-only: Hibernate's find answers null for the"
                    + " JDBC failure of its load (HHH-12472)");
        }
        return new IllegalStateException(missing(emf, em, type, id));
    }

    /**
     * Every row exists from the start of the cell: says where a load that found none ran, as far as can be told
     * (the unit of work's server, if it still answers), and what each standby and the library report right now.
     */
    private String missing(EntityManagerFactory emf, EntityManager em, Class<?> type, int id) {
        final StringBuilder text = new StringBuilder(
                type.getSimpleName() + " " + id + " not found, though it exists since the cell started; ");
        try {
            final Object[] server = (Object[]) em.createNativeQuery(
                            "select inet_server_port(), pg_last_wal_replay_lsn()::text, (select count(*) from boards)")
                    .getSingleResult();
            text.append("the unit of work's server: ")
                    .append(node(((Number) server[0]).intValue()))
                    .append(" replayed ")
                    .append(server[1])
                    .append(", ")
                    .append(server[2])
                    .append(" boards");
        } catch (RuntimeException e) {
            text.append("the unit of work's server did not answer: ").append(Failures.describe(e));
        }
        for (var standby : cluster.standbys()) {
            text.append("; ").append(standby.name()).append(": ");
            try (var c = cluster.connect(standby);
                    var s = c.createStatement();
                    var rs = s.executeQuery("select pg_last_wal_replay_lsn()::text,"
                            + " extract(epoch from now() - pg_last_xact_replay_timestamp()),"
                            + " (select count(*) from boards)")) {
                rs.next();
                text.append("replayed ")
                        .append(rs.getString(1))
                        .append(", last replayed commit ")
                        .append(rs.getString(2))
                        .append(" s old, ")
                        .append(rs.getLong(3))
                        .append(" boards");
            } catch (java.sql.SQLException | RuntimeException e) {
                text.append(Failures.describe(e));
            }
        }
        final RoutingStatus status = RoutingStatus.of(emf);
        if (status != null) {
            text.append("; the library: ");
            status.nodes()
                    .forEach(n -> text.append(n.name())
                            .append(n.up() ? " up" : " down")
                            .append(" lag ")
                            .append(n.lagBytes())
                            .append(" B ")
                            .append(n.lagSeconds())
                            .append(" s, "));
        }
        return text.toString();
    }

    private Op failed(
            int thread, Kind kind, long unit, String object, long start, boolean committing, RuntimeException e) {
        final ErrorKind errorKind = Failures.kind(e);
        final Outcome outcome = !committing
                        || errorKind == ErrorKind.OPTIMISTIC
                        || errorKind == ErrorKind.SERIALIZATION
                        || errorKind == ErrorKind.MARKER
                ? Outcome.FAILED
                : Outcome.UNKNOWN;
        return new Op(
                thread,
                actor(thread),
                kind,
                unit,
                object,
                -1,
                -1,
                -1,
                null,
                null,
                start,
                System.nanoTime(),
                outcome,
                errorKind,
                Failures.describe(e));
    }

    /**
     * A read of a counter in {@code em}, recorded: {@code path} 0–1 {@code find}, 2 a query, 3 a query marked
     * cacheable; {@code hinted}: a query with the {@code STALE_READ} hint.
     *
     * @return whether it returned
     */
    private boolean read(
            EntityManagerFactory emf,
            EntityManager em,
            int thread,
            Kind kind,
            long unit,
            String object,
            Class<? extends Counted> type,
            int id,
            int path,
            boolean hinted) {
        final long start = System.nanoTime();
        try (RoutingScope onPrimary = path == 4 ? RoutingScope.open(Strategy.PRIMARY) : null) {
            final long value;
            final Integer port;
            final String how;
            if (path == 4 || path < 2 && !hinted) {
                final boolean inCache = cached && emf.getCache().contains(type, id);
                final Counted entity = em.find(type, id);
                if (entity == null) {
                    throw notFound(emf, em, type, id);
                }
                value = entity.value();
                port = entity.server();
                how = (inCache ? "find (the cache had the key)" : "find") + (path == 4 ? " in a PRIMARY scope" : "");
            } else {
                final TypedQuery<Object[]> query = em.createQuery(
                                "select e.value, e.server from " + type.getSimpleName() + " e where e.id = :id",
                                Object[].class)
                        .setParameter("id", id);
                final boolean cacheable = !hinted && path == 3 && cached;
                if (hinted) {
                    query.setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.STALE_READ));
                } else if (cacheable) {
                    query.setHint(HibernateHints.HINT_CACHEABLE, true);
                }
                final Object[] row = query.getSingleResult();
                value = ((Number) row[0]).longValue();
                port = row[1] == null ? null : ((Number) row[1]).intValue();
                how = hinted ? "query (STALE_READ)" : cacheable ? "query (cacheable)" : "query";
            }
            history.record(new Op(
                    thread,
                    actor(thread),
                    kind,
                    unit,
                    object,
                    value,
                    -1,
                    -1,
                    node(port),
                    how,
                    start,
                    System.nanoTime(),
                    Outcome.OK,
                    null,
                    null));
            return true;
        } catch (RuntimeException e) {
            history.record(failed(thread, kind, unit, object, start, false, e));
            return false;
        }
    }

    /**
     * {@code find} of the thread's own counter, {@code value++}, commit: in a default scope of the actor, or (30 %)
     * a {@code PRIMARY} one, as the servlet filter runs a mutation request. Half the time the scope, which has now
     * written, reads the row again in a new EntityManager.
     */
    private void writeOwn(Random random, EntityManagerFactory emf, int thread) {
        final boolean primaryScope = random.nextInt(10) < 3;
        final Load load = load(random);
        final boolean readBack = random.nextBoolean();
        final int readBackPath = random.nextInt(4);
        // As Spring's NESTED propagation: a savepoint before the read and the write, released after the flush.
        final boolean nested = random.nextInt(5) == 0;
        final Strategy strategy = primaryScope ? Strategy.PRIMARY : load == Load.SCOPE ? Strategy.STALE_READ : null;
        final Kind readKind = load == Load.DEFAULT || primaryScope ? Kind.READ_OWN : Kind.READ_STALE;
        final String object = counter(thread);
        final long unit = units.incrementAndGet();
        final long start = System.nanoTime();
        boolean committing = false;
        try (RoutingScope ignored = scope(thread, strategy);
                EntityManager em = emf.createEntityManager()) {
            boolean acknowledged = false;
            try {
                begin(em);
                final Savepoint[] savepoint = {null};
                if (nested) {
                    em.unwrap(Session.class).doWork(connection -> savepoint[0] = connection.setSavepoint());
                }
                final long readStart = System.nanoTime();
                final Counter row = load(emf, em, Counter.class, thread, primaryScope ? Load.DEFAULT : load, "");
                final long before = row.value;
                final String where = node(row.server);
                final String how = (primaryScope
                                ? "find (PRIMARY scope)"
                                : load == Load.HINT
                                        ? "query (STALE_READ)"
                                        : load == Load.SCOPE ? "find (STALE_READ scope)" : "find")
                        + (nested ? " after a savepoint" : "");
                history.record(new Op(
                        thread,
                        actor(thread),
                        readKind,
                        unit,
                        object,
                        before,
                        -1,
                        -1,
                        where,
                        how,
                        readStart,
                        System.nanoTime(),
                        Outcome.OK,
                        null,
                        null));
                row.increment();
                if (nested) {
                    em.flush();
                    em.unwrap(Session.class).doWork(connection -> connection.releaseSavepoint(savepoint[0]));
                }
                committing = true;
                em.getTransaction().commit();
                history.record(new Op(
                        thread,
                        actor(thread),
                        Kind.WRITE_OWN,
                        unit,
                        object,
                        before + 1,
                        before,
                        -1,
                        where,
                        how,
                        start,
                        System.nanoTime(),
                        Outcome.OK,
                        null,
                        null));
                acknowledged = true;
            } catch (RuntimeException e) {
                history.record(failed(thread, Kind.WRITE_OWN, unit, object, start, committing, e));
            } finally {
                rollbackQuietly(em);
            }
            if (acknowledged && readBack) {
                try (EntityManager again = emf.createEntityManager()) {
                    read(
                            emf,
                            again,
                            thread,
                            strategy == Strategy.STALE_READ ? Kind.READ_STALE : Kind.READ_OWN,
                            unit,
                            object,
                            Counter.class,
                            thread,
                            readBackPath,
                            false);
                }
            }
        }
    }

    /** A read of the actor's own row (the thread's or its twin's) in a new scope and EntityManager. */
    private void readOwn(Random random, EntityManagerFactory emf, int thread) {
        final int row = random.nextBoolean() ? thread : twin(thread);
        final int path = random.nextInt(4);
        final boolean hinted = options.cell().reads() == Cell.Reads.STALE_READ && random.nextInt(5) == 0;
        try (RoutingScope ignored = scope(thread, null);
                EntityManager em = emf.createEntityManager()) {
            read(
                    emf,
                    em,
                    thread,
                    hinted ? Kind.READ_STALE : Kind.READ_OWN,
                    units.incrementAndGet(),
                    counter(row),
                    Counter.class,
                    row,
                    path,
                    hinted);
        }
    }

    /**
     * One unit of work that reads another thread's counter, or the versioned shared one (which every thread
     * increments), 3–6 times, 1–15 ms apart: long enough for a pause to end, a marker to change or a pool to
     * free up between two reads. In a third of them the EntityManager outlives the actor's scope, as one a
     * framework opens for the whole request: only the first read runs in the scope (and needs the actor's
     * stamp, so it may have to fall back to the primary); the others run after it closed and need nothing.
     */
    private void readUnit(Random random, EntityManagerFactory emf, int thread) {
        final boolean shared = random.nextBoolean();
        final boolean scopeAroundFirstReadOnly = random.nextInt(3) == 0;
        final int other = (thread + 1 + random.nextInt(THREADS - 1)) % THREADS;
        final int[] paths = new int[3 + random.nextInt(4)];
        final int[] gaps = new int[paths.length];
        for (int i = 0; i < paths.length; i++) {
            // Path 4: a read on the primary on purpose (a PRIMARY scope), then the unit's other reads: the mix of
            // open-session-in-view, where a service's read-write transaction reads on the primary and a read-only
            // repository call of the same request reads a replica, which must not go back in time.
            paths[i] = random.nextInt(5);
            gaps[i] = 1 + random.nextInt(15);
        }
        final long unit = units.incrementAndGet();
        final Class<? extends Counted> type = shared ? VersionedCounter.class : Counter.class;
        final String object = shared ? "versioned" : counter(other);
        final int id = shared ? SHARED_ID : other;
        if (!scopeAroundFirstReadOnly) {
            try (RoutingScope ignored = scope(thread, null);
                    EntityManager em = emf.createEntityManager()) {
                for (int i = 0; i < paths.length; i++) {
                    if (i > 0) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(gaps[i])); // pacing: the gap between reads
                    }
                    em.clear(); // the next find asks the second-level cache or the database again
                    if (!read(emf, em, thread, Kind.READ_UNIT, unit, object, type, id, paths[i], false)) {
                        return;
                    }
                }
            }
            return;
        }
        try (EntityManager em = emf.createEntityManager()) {
            try (RoutingScope ignored = scope(thread, null)) {
                if (!read(emf, em, thread, Kind.READ_UNIT, unit, object, type, id, paths[0], false)) {
                    return;
                }
            }
            for (int i = 1; i < paths.length; i++) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(gaps[i])); // pacing: the gap between reads
                em.clear();
                if (!read(emf, em, thread, Kind.READ_UNIT, unit, object, type, id, paths[i], false)) {
                    return;
                }
            }
        }
    }

    /** {@code find} of a shared counter (unversioned, serialized; or versioned, concurrent), {@code value++}, commit. */
    private void increment(Random random, EntityManagerFactory emf, int thread) {
        final boolean versioned = random.nextBoolean();
        if (!versioned) {
            final int shape = random.nextInt(4);
            if (shape > 0) {
                incrementShaped(emf, thread, shape);
                return;
            }
        }
        final Load load = load(random);
        final String object = versioned ? "versioned" : "shared";
        final ReentrantLock lock = !versioned && options.serialize() ? sharedLock : null;
        final long unit = units.incrementAndGet();
        final long start = System.nanoTime();
        if (!acquire(lock, thread, Kind.INCREMENT, unit, object, start)) {
            return;
        }
        boolean committing = false;
        try (RoutingScope ignored = scope(thread, load == Load.SCOPE ? Strategy.STALE_READ : null);
                EntityManager em = emf.createEntityManager()) {
            try {
                begin(em);
                final Counted row = versioned
                        ? load(emf, em, VersionedCounter.class, SHARED_ID, load, "")
                        : load(emf, em, SharedCounter.class, SHARED_ID, load, "");
                final long before = row.value();
                final String where = node(row.server());
                row.increment();
                committing = true;
                em.getTransaction().commit();
                history.record(new Op(
                        thread,
                        actor(thread),
                        Kind.INCREMENT,
                        unit,
                        object,
                        before + 1,
                        before,
                        -1,
                        where,
                        load == Load.HINT
                                ? "query (STALE_READ)"
                                : load == Load.SCOPE ? "find (STALE_READ scope)" : "find",
                        start,
                        System.nanoTime(),
                        Outcome.OK,
                        null,
                        null));
            } catch (RuntimeException e) {
                history.record(failed(thread, Kind.INCREMENT, unit, object, start, committing, e));
            } finally {
                rollbackQuietly(em);
            }
        } finally {
            if (lock != null) {
                lock.unlock();
            }
        }
    }

    /** What an increment read before it wrote: the value and the server that served it. */
    private record Read(long value, String where) {}

    /**
     * The unversioned counter's increment in the shapes besides {@code find} in a transaction: a
     * {@code StatelessSession} ({@code get}, {@code value++}, {@code update} in one transaction), the same
     * through a Jakarta Data repository ({@link SharedCounters}), and a detached merge ({@code find} in one unit of work, {@code merge} of the
     * incremented instance in the next, as Spring Data's {@code findById} then {@code save} in two
     * transactions). Serialized like the other unversioned increments: a lost one means a stale state was
     * written back.
     */
    private void incrementShaped(EntityManagerFactory emf, int thread, int shape) {
        final ReentrantLock lock = options.serialize() ? sharedLock : null;
        final long unit = units.incrementAndGet();
        final long start = System.nanoTime();
        if (!acquire(lock, thread, Kind.INCREMENT, unit, "shared", start)) {
            return;
        }
        final boolean[] committing = {false};
        try (RoutingScope ignored = scope(thread, null)) {
            final Read read = shape == 1
                    ? statelessIncrement(emf, committing, false)
                    : shape == 2 ? detachedIncrement(emf, committing) : statelessIncrement(emf, committing, true);
            history.record(new Op(
                    thread,
                    actor(thread),
                    Kind.INCREMENT,
                    unit,
                    "shared",
                    read.value() + 1,
                    read.value(),
                    -1,
                    read.where(),
                    shape == 1
                            ? "stateless get, update"
                            : shape == 2
                                    ? "find, then merge in the next unit of work"
                                    : "Jakarta Data repository find, update",
                    start,
                    System.nanoTime(),
                    Outcome.OK,
                    null,
                    null));
        } catch (RuntimeException e) {
            history.record(failed(thread, Kind.INCREMENT, unit, "shared", start, committing[0], e));
        } finally {
            if (lock != null) {
                lock.unlock();
            }
        }
    }

    /** In a {@code StatelessSession}, directly or through the Jakarta Data repository {@link SharedCounters}. */
    private Read statelessIncrement(EntityManagerFactory emf, boolean[] committing, boolean repository) {
        try (StatelessSession session = emf.unwrap(SessionFactory.class).openStatelessSession()) {
            final SharedCounters counters = repository ? new SharedCounters_(session) : null;
            session.getTransaction().begin();
            try {
                final SharedCounter row =
                        repository ? counters.byId(SHARED_ID) : session.get(SharedCounter.class, SHARED_ID);
                if (row == null) {
                    throw new IllegalStateException("SharedCounter " + SHARED_ID + " not found by a stateless get");
                }
                final Read read = new Read(row.value(), node(row.server()));
                row.increment();
                if (repository) {
                    counters.update(row);
                } else {
                    session.update(row);
                }
                committing[0] = true;
                session.getTransaction().commit();
                return read;
            } finally {
                if (session.getTransaction().isActive()) {
                    session.getTransaction().rollback();
                }
            }
        }
    }

    private Read detachedIncrement(EntityManagerFactory emf, boolean[] committing) {
        final SharedCounter detached;
        try (EntityManager em = emf.createEntityManager()) {
            detached = load(emf, em, SharedCounter.class, SHARED_ID, Load.DEFAULT, "");
        }
        final Read read = new Read(detached.value(), node(detached.server()));
        detached.increment();
        try (EntityManager em = emf.createEntityManager()) {
            try {
                begin(em);
                em.merge(detached);
                committing[0] = true;
                em.getTransaction().commit();
            } finally {
                rollbackQuietly(em);
            }
        }
        return read;
    }

    /** Adds a new element to the shared bag of a board: {@code find} (or a STALE_READ query), {@code add}, commit. */
    private void add(Random random, EntityManagerFactory emf, int thread) {
        final Load load = load(random);
        final int boardId = 1 + random.nextInt(BOARDS);
        final long unit = units.incrementAndGet();
        final String element = "t" + thread + "-u" + unit;
        final ReentrantLock lock = options.serialize() ? boardLocks.get(boardId - 1) : null;
        final long start = System.nanoTime();
        if (!acquire(lock, thread, Kind.ADD, unit, element, start)) {
            return;
        }
        boolean committing = false;
        try (RoutingScope ignored = scope(thread, load == Load.SCOPE ? Strategy.STALE_READ : null);
                EntityManager em = emf.createEntityManager()) {
            try {
                begin(em);
                final Board board = load(emf, em, Board.class, boardId, load, " left join fetch e.notes");
                final int size = board.notes.size();
                board.notes.add(element);
                committing = true;
                em.getTransaction().commit();
                history.record(new Op(
                        thread,
                        actor(thread),
                        Kind.ADD,
                        unit,
                        element,
                        size + 1,
                        size,
                        boardId,
                        node(board.server),
                        (load == Load.HINT
                                        ? "query (STALE_READ)"
                                        : load == Load.SCOPE ? "find (STALE_READ scope)" : "find")
                                + " of board " + boardId,
                        start,
                        System.nanoTime(),
                        Outcome.OK,
                        null,
                        null));
            } catch (RuntimeException e) {
                history.record(failed(thread, Kind.ADD, unit, element, start, committing, e));
            } finally {
                rollbackQuietly(em);
            }
        } finally {
            if (lock != null) {
                lock.unlock();
            }
        }
    }

    private boolean acquire(ReentrantLock lock, int thread, Kind kind, long unit, String object, long start) {
        if (lock == null) {
            return true;
        }
        try {
            if (lock.tryLock(30, TimeUnit.SECONDS)) {
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        history.record(new Op(
                thread,
                actor(thread),
                kind,
                unit,
                object,
                -1,
                -1,
                -1,
                null,
                null,
                start,
                System.nanoTime(),
                Outcome.FAILED,
                ErrorKind.OTHER,
                "the test's lock was not free within 30 s: another operation stalled"));
        return false;
    }

    /** In one transaction: read a snapshot row twice (2 ms apart), then {@code update … value + 1 returning value}. */
    private void snapshot(Random random, EntityManagerFactory emf, int thread) {
        final int id = 1 + random.nextInt(SNAPSHOT_ROWS);
        final String object = "snapshot:" + id;
        final long unit = units.incrementAndGet();
        final long start = System.nanoTime();
        boolean committing = false;
        try (RoutingScope ignored = scope(thread, null);
                EntityManager em = emf.createEntityManager()) {
            try {
                begin(em);
                final Object[] first = (Object[])
                        em.createNativeQuery("select value, inet_server_port() from snapshot_rows where id = ?")
                                .setParameter(1, id)
                                .getSingleResult();
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // pacing: room for a concurrent commit
                final Object[] second = (Object[])
                        em.createNativeQuery("select value, inet_server_port() from snapshot_rows where id = ?")
                                .setParameter(1, id)
                                .getSingleResult();
                final Number written = (Number)
                        em.createNativeQuery("update snapshot_rows set value = value + 1 where id = ? returning value")
                                .setParameter(1, id)
                                .getSingleResult();
                committing = true;
                em.getTransaction().commit();
                history.record(new Op(
                        thread,
                        actor(thread),
                        Kind.SNAPSHOT,
                        unit,
                        object,
                        written.longValue(),
                        ((Number) first[0]).longValue(),
                        ((Number) second[0]).longValue(),
                        node(((Number) first[1]).intValue()),
                        "native",
                        start,
                        System.nanoTime(),
                        Outcome.OK,
                        null,
                        null));
            } catch (RuntimeException e) {
                history.record(failed(thread, Kind.SNAPSHOT, unit, object, start, committing, e));
            } finally {
                rollbackQuietly(em);
            }
        }
    }

    /** With the cache on, evicts an entry as if it had expired; otherwise reads the actor's own row. */
    private void evict(Random random, EntityManagerFactory emf, int thread) {
        final int what = random.nextInt(4);
        final int row = random.nextInt(THREADS);
        if (!cached) {
            readOwn(random, emf, thread);
            return;
        }
        final org.hibernate.Cache cache = emf.getCache().unwrap(org.hibernate.Cache.class);
        switch (what) {
            case 0 -> cache.evictEntityData(Counter.class, row);
            case 1 -> cache.evictEntityData(SharedCounter.class, SHARED_ID);
            case 2 -> cache.evictEntityData(VersionedCounter.class, SHARED_ID);
            default -> cache.evictCollectionData(Board.class.getName() + ".notes", 1 + row % BOARDS);
        }
    }
}
