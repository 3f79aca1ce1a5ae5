package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.LAG_BOUND_NO_TEST_REACHES;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.awaitCaughtUpAsSeenBy;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RetryLaterException;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.StampedWork;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.RedisServer;
import io.lettuce.core.AclCategory;
import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.hibernate.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.replication.LogSequenceNumber;

/**
 * Read-your-writes by WAL position on a real primary, two streaming standbys and a real Redis.
 * One standby's replay is paused so that it deterministically lacks a write; every read that must
 * see the write is checked both in the data and by the node that served it.
 */
@ExtendWith(RoutingLeakCheck.class)
class ReadYourWritesIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2)
            .withRedis()
            .configure(builder -> builder.serverSetting("log_statement", "all"));

    static PostgresCluster cluster;
    static RedisServer redis;
    static EntityManagerFactory emf;

    @BeforeAll
    static void start() throws SQLException {
        cluster = DB.cluster();
        redis = DB.redis();
        createSchema(cluster);
        onPrimary(
                cluster,
                "drop table if exists users; create table users (id text primary key, name text, read_after_write_lsn pg_lsn)");
        onPrimary(
                cluster,
                "insert into users (id, name) values ('alice', 'Alice'), ('bob', 'Bob'), ('busy', 'Busy'), "
                        + "('frank', 'Frank'), ('grace', 'Grace'), ('heidi', 'Heidi'), ('ivan', 'Ivan')");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        // The tests pause a standby and expect it to keep serving other actors, however long they take.
        emf = emf(cluster, Map.of(RoutingSettings.MAX_REPLICA_LAG, LAG_BOUND_NO_TEST_REACHES));
    }

    @AfterAll
    static void stop() {
        if (emf != null) {
            emf.close();
        }
    }

    @BeforeEach
    void replicasCaughtUp() {
        awaitCaughtUpAsSeenBy(cluster, emf);
    }

    private static long writeNoteAs(EntityManagerFactory factory, String actor, String text) {
        try (RoutingScope scope = RoutingScope.builder().actor(actor).open();
                EntityManager em = factory.createEntityManager()) {
            em.getTransaction().begin();
            final Note note = new Note(text);
            em.persist(note);
            em.getTransaction().commit();
            assertThat(scope.lastCommit())
                    .as("the commit's position is recorded in the scope")
                    .isNotNull();
            return note.id;
        }
    }

    /** Reads the note in a new scope of {@code actor}; returns the node that served it, failing if the note is missing. */
    private static Node readNoteAs(EntityManagerFactory factory, String actor, ConsistencyToken minimum, long id) {
        try (RoutingScope ignored =
                        RoutingScope.builder().actor(actor).minimum(minimum).open();
                EntityManager em = factory.createEntityManager()) {
            final Note note = em.find(Note.class, id);
            final Node node = servedBy(cluster, em);
            assertThat(note)
                    .as("%s's read served by %s must see the write (%s)", actor, node, routingState(factory))
                    .isNotNull();
            return node;
        }
    }

    private static Set<Node> nodesServing(EntityManagerFactory factory, String actor, int reads) {
        final Set<Node> nodes = new HashSet<>();
        for (int i = 0; i < reads; i++) {
            try (RoutingScope ignored = RoutingScope.builder().actor(actor).open();
                    EntityManager em = factory.createEntityManager()) {
                nodes.add(servedBy(cluster, em));
            }
        }
        return nodes;
    }

    @Test
    void actorsWrite_isVisibleToTheActorsLaterUnitsOfWork_whileAReplicaLacksIt() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final long id = writeNoteAs(emf, "alice", "alice's note");
        for (int i = 0; i < 10; i++) {
            assertThat(readNoteAs(emf, "alice", null, id))
                    .as("alice's read #%d (%s)", i, routingState(emf))
                    .isNotEqualTo(paused);
        }
        assertThat(nodesServing(emf, "bob", 10))
                .as("another actor still reads from every replica (%s)", routingState(emf))
                .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));

        cluster.resumeReplay(paused);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        runtime(emf).checkReplicasNow();
        assertThat(nodesServing(emf, "alice", 10))
                .as("once caught up, alice reads from every replica again (%s)", routingState(emf))
                .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
    }

    @Test
    void secondInstance_readsTheStampFromThePrimary_andSeesTheActorsWrite() throws SQLException {
        final Map<String, Object> table = Map.of(RoutingSettings.ACTOR_STAMPS, "TABLE");
        final EntityManagerFactory instanceA = emf(cluster, table);
        final EntityManagerFactory instanceB = emf(cluster, table);
        try (instanceA;
                instanceB) {
            final Node paused = cluster.standby(1);
            cluster.pauseReplay(paused);
            final long id = writeNoteAs(instanceA, "alice", "written through A");
            final ConsistencyToken stamp = ReadYourWrites.stampOf(instanceB, "alice");
            assertThat(stamp).as("the stamp column on the primary").isNotNull();
            for (int i = 0; i < 10; i++) {
                assertThat(readNoteAs(instanceB, "alice", stamp, id))
                        .as("read #%d (%s)", i, routingState(instanceB))
                        .isNotEqualTo(paused);
            }
        }
    }

    /**
     * {@code actor_stamps=TABLE}, the default actor resolution, no Redis: instance B knows nothing of
     * the actor's write through A but what the actors' table on the primary says, and must read it
     * itself, once per scope.
     */
    @Test
    void tableStamps_areReadByTheLibrary_soASecondInstanceSeesTheActorsWrite_readingTheStampOncePerScope()
            throws IOException {
        final Map<String, Object> table = Map.of(RoutingSettings.ACTOR_STAMPS, "TABLE");
        final EntityManagerFactory instanceA = emf(cluster, table);
        final EntityManagerFactory instanceB = emf(cluster, table);
        try (instanceA;
                instanceB) {
            final Node paused = cluster.standby(1);
            cluster.pauseReplay(paused);
            final long id = writeNoteAs(instanceA, "frank", "written through A");
            for (int i = 0; i < 10; i++) {
                assertThat(readNoteAs(instanceB, "frank", null, id))
                        .as("read #%d (%s)", i, routingState(instanceB))
                        .isNotEqualTo(paused);
            }

            final long logSize = Files.size(cluster.primary().logFile());
            try (RoutingScope ignored = RoutingScope.builder().actor("frank").open()) {
                for (int i = 0; i < 3; i++) {
                    try (EntityManager em = instanceB.createEntityManager()) {
                        assertThat(em.find(Note.class, id)).isNotNull();
                    }
                }
            }
            assertThat(primaryLogSince(logSize)
                            .filter(line -> line.contains("hibernate-routing actor-stamp"))
                            .count())
                    .as("the stamp is read from the primary once per scope")
                    .isEqualTo(1);
        }
    }

    /**
     * A unit of work that holds a primary connection (in auto-commit: a statement forced to the
     * primary, then a read) reads the actor's stamp on that connection; with a primary pool of one
     * connection a second one could only be had by waiting for the pool's timeout.
     */
    @Test
    void tableStampRead_usesThePrimaryConnectionTheUnitOfWorkHolds() {
        final EntityManagerFactory writer = emf(cluster, Map.of(RoutingSettings.ACTOR_STAMPS, "TABLE"));
        final EntityManagerFactory onePrimaryConnection = emf(
                cluster,
                Map.of(
                        RoutingSettings.ACTOR_STAMPS,
                        "TABLE",
                        RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE,
                        "1",
                        RoutingSettings.PRIMARY_CONNECTION_TIMEOUT,
                        "1s"));
        try (writer;
                onePrimaryConnection) {
            final Node paused = cluster.standby(1);
            cluster.pauseReplay(paused);
            writeNoteAs(writer, "grace", "written through another instance");
            // Standby 2 has the write before the reads, which must not depend on how soon it replays it: the
            // LSN gate waits only 100 ms for it.
            final ConsistencyToken stamp = ReadYourWrites.stampOf(onePrimaryConnection, "grace");
            assertThat(stamp).as("the stamp column on the primary").isNotNull();
            cluster.awaitReplay(
                    cluster.standby(2), LogSequenceNumber.valueOf(stamp.position()), Duration.ofSeconds(30));
            for (int i = 0; i < 4; i++) {
                try (RoutingScope ignored =
                                RoutingScope.builder().actor("grace").open();
                        EntityManager em = onePrimaryConnection.createEntityManager()) {
                    final int[] ports = new int[2];
                    em.unwrap(Session.class).doWork(connection -> {
                        ports[0] = serverPort(connection, "/*+ hibernate.routing.strategy=PRIMARY */ ");
                        ports[1] = serverPort(connection, "");
                    });
                    assertThat(cluster.nodeForPort(ports[0])).isEqualTo(cluster.primary());
                    assertThat(cluster.nodeForPort(ports[1]))
                            .as(
                                    "the read after it, on the replica that has the write, found by the stamp (%s)",
                                    routingState(onePrimaryConnection))
                            .isEqualTo(cluster.standby(2));
                }
            }
        }
    }

    private static int serverPort(java.sql.Connection connection, String hint) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(hint + "select inet_server_port()");
                ResultSet rs = statement.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static java.util.stream.Stream<String> primaryLogSince(long offset) throws IOException {
        final byte[] log = Files.readAllBytes(cluster.primary().logFile());
        return new String(log, (int) offset, log.length - (int) offset).lines();
    }

    @Test
    void tableStamps_withoutTheColumn_failAtBootstrapWithTheSchemaSnippet() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.ACTOR_STAMPS, "TABLE");
        settings.put(RoutingSettings.ACTOR_STAMPS_COLUMN, "missing_lsn");
        assertThatThrownBy(() -> emf(cluster, settings).close())
                .hasStackTraceContaining(RoutingSettings.ACTOR_STAMPS_COLUMN)
                .hasStackTraceContaining("alter table users add column missing_lsn pg_lsn");
    }

    @Test
    void concurrentStamps_neverMoveAnActorsStampBackwards() throws Exception {
        final EntityManagerFactory stamped = emf(
                cluster,
                Map.of(RoutingSettings.ACTOR_STAMPS, "TABLE", RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "12"));
        final ExecutorService writers = Executors.newFixedThreadPool(8);
        final ConcurrentLinkedQueue<ConsistencyToken> commits = new ConcurrentLinkedQueue<>();
        final AtomicBoolean writing = new AtomicBoolean(true);
        final List<String> regressions = new ArrayList<>();
        try (stamped) {
            final Thread sampler = new Thread(() -> {
                ConsistencyToken last = null;
                while (writing.get()) {
                    final ConsistencyToken now = ReadYourWrites.stampOf(stamped, "busy");
                    if (last != null && now != null && now.compareTo(last) < 0) {
                        regressions.add(last + " -> " + now);
                    }
                    last = now == null ? last : now;
                }
            });
            sampler.start();
            final CountDownLatch go = new CountDownLatch(1);
            final List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                done.add(writers.submit(() -> {
                    go.await();
                    for (int i = 0; i < 20; i++) {
                        try (RoutingScope scope =
                                        RoutingScope.builder().actor("busy").open();
                                EntityManager em = stamped.createEntityManager()) {
                            em.getTransaction().begin();
                            em.persist(new Note("busy"));
                            em.getTransaction().commit();
                            commits.add(scope.lastCommit());
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
            writing.set(false);
            sampler.join();
            final ConsistencyToken latest =
                    commits.stream().max(ConsistencyToken::compareTo).orElseThrow();
            assertThat(commits).hasSize(160);
            assertThat(regressions)
                    .as("the stamp, sampled while 8 threads wrote, never went back")
                    .isEmpty();
            assertThat(ReadYourWrites.stampOf(stamped, "busy"))
                    .as("the stamp ends at the latest commit")
                    .isEqualTo(latest);
        } finally {
            writers.shutdownNow();
        }
    }

    /**
     * {@code actor_stamps=TABLE}: an outer transaction of the actor locks the actor's row in the users
     * table, and an inner one on the same thread (a second EntityManager, as {@code REQUIRES_NEW} runs
     * one) commits a write. The inner commit's stamp must not wait for the outer's lock, since the outer
     * waits for the inner: a deadlock that no server detects, which would hang the thread and both
     * connections. The actor's next read, with every standby lacking the write, still sees it.
     */
    @Test
    void nestedCommit_whileTheOuterTransactionLocksTheActorsRow_completes_andTheActorReadsItsWrite() throws Exception {
        final EntityManagerFactory stamped = emf(
                cluster,
                Map.of(
                        RoutingSettings.ACTOR_STAMPS,
                        "TABLE",
                        RoutingSettings.MAX_REPLICA_LAG,
                        LAG_BOUND_NO_TEST_REACHES));
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        try (stamped) {
            cluster.standbys().forEach(cluster::pauseReplay);
            final Future<Long> nested = thread.submit(() -> {
                try (RoutingScope ignored =
                                RoutingScope.builder().actor("grace").open();
                        EntityManager outer = stamped.createEntityManager()) {
                    outer.getTransaction().begin();
                    outer.createNativeQuery("select id from users where id = 'grace' for update")
                            .getResultList();
                    final long id = writeNoteAs(stamped, "grace", "written while the outer holds grace's row");
                    outer.getTransaction().commit();
                    return id;
                }
            });
            final long id = completesWithin(nested, "the nested commit");
            final Node served = readNoteAs(stamped, "grace", null, id);
            assertThat(served.isPrimary())
                    .as("every standby lacks the write (%s)", routingState(stamped))
                    .isTrue();
        } finally {
            cluster.standbys().forEach(cluster::resumeReplay);
            RoutingItSupport.endSessionsStuckOnLocks(cluster);
            thread.shutdownNow();
        }
    }

    /**
     * {@code actor_stamps=TABLE}: another transaction (any long one) holds the actor's row. A commit of
     * the actor is not held back by it; the actor's reads through this instance see the write at once,
     * and once the row is free the stamp reaches the table, so that another instance sees the write too.
     */
    @Test
    void commit_whileAnotherTransactionHoldsTheActorsRow_isNotHeldBack_andTheStampReachesTheTableOnceTheRowIsFree()
            throws Exception {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory instanceA = emf(
                cluster,
                Map.of(
                        RoutingSettings.ACTOR_STAMPS,
                        "TABLE",
                        RoutingSettings.MAX_REPLICA_LAG,
                        LAG_BOUND_NO_TEST_REACHES,
                        RoutingSettings.METER_REGISTRY,
                        meters));
        final EntityManagerFactory instanceB = emf(
                cluster,
                Map.of(
                        RoutingSettings.ACTOR_STAMPS,
                        "TABLE",
                        RoutingSettings.MAX_REPLICA_LAG,
                        LAG_BOUND_NO_TEST_REACHES));
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        try (instanceA;
                instanceB;
                java.sql.Connection holder = cluster.connect(cluster.primary())) {
            cluster.standbys().forEach(cluster::pauseReplay);
            holder.setAutoCommit(false);
            try (var statement = holder.createStatement()) {
                statement.execute("select id from users where id = 'heidi' for update");
            }
            final Future<Object[]> write = thread.submit(() -> {
                try (RoutingScope scope = RoutingScope.builder().actor("heidi").open();
                        EntityManager em = instanceA.createEntityManager()) {
                    em.getTransaction().begin();
                    final Note note = new Note("written while another transaction holds heidi's row");
                    em.persist(note);
                    em.getTransaction().commit();
                    return new Object[] {note.id, scope.lastCommit()};
                }
            });
            final Object[] written = completesWithin(write, "the commit");
            final long id = (Long) written[0];
            final ConsistencyToken commit = (ConsistencyToken) written[1];
            assertThat(commit).as("the commit's position").isNotNull();
            assertThat(readNoteAs(instanceA, "heidi", null, id).isPrimary())
                    .as(
                            "while the row is held, heidi's reads through the writing instance see the write (%s)",
                            routingState(instanceA))
                    .isTrue();
            assertThat(meters.find("hibernate.routing.actor_stamps.deferred").counter())
                    .as("the deferred stamp is counted")
                    .isNotNull()
                    .satisfies(counter -> assertThat(counter.count()).isGreaterThanOrEqualTo(1));

            holder.rollback();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            ConsistencyToken inTable = ReadYourWrites.stampOf(instanceB, "heidi");
            while ((inTable == null || inTable.compareTo(commit) < 0) && System.nanoTime() < deadline) {
                Thread.sleep(50);
                inTable = ReadYourWrites.stampOf(instanceB, "heidi");
            }
            assertThat(inTable)
                    .as("once the row is free, the stamp in the actors' table covers the commit")
                    .isNotNull()
                    .satisfies(stamp -> assertThat(stamp.compareTo(commit)).isGreaterThanOrEqualTo(0));
            assertThat(readNoteAs(instanceB, "heidi", null, id).isPrimary())
                    .as("another instance, reading the stamp from the table (%s)", routingState(instanceB))
                    .isTrue();
        } finally {
            cluster.standbys().forEach(cluster::resumeReplay);
            thread.shutdownNow();
        }
    }

    /** The result of {@code work}, failing (rather than hanging) if it does not complete within a minute. */
    static <T> T completesWithin(Future<T> work, String what) throws Exception {
        try {
            return work.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError(what + " did not complete within 60 seconds: it waits without a bound", e);
        }
    }

    /**
     * Twice as many writing actors as the primary pool has connections, each with a table stamp, and
     * commits that start only when the committing units of work hold every connection of the pool: a
     * stamp update that needed a second connection would wait for the pool's timeout and then fail:
     * no connection comes back while the committing units hold them all. No unit of work may need two
     * primary connections at once. The timeout is long so that, on a busy machine, a writer that waits
     * its turn for a connection does not fail; how long commits take is printed, not judged.
     */
    @Test
    void tableStamps_withMoreWritersThanPrimaryConnections_areAdvancedWithoutASecondConnection() throws Exception {
        final int poolSize = 5;
        final int writers = 2 * poolSize;
        final int rounds = 4;
        final Duration poolTimeout = Duration.ofSeconds(30);
        final List<String> actors = new ArrayList<>();
        for (int i = 0; i < writers; i++) {
            actors.add("pool-writer-" + i);
        }
        onPrimary(
                cluster,
                "insert into users (id, name) select id, id from unnest(array['" + String.join("','", actors)
                        + "']) as id on conflict (id) do nothing");
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory stamped = emf(
                cluster,
                Map.of(
                        RoutingSettings.ACTOR_STAMPS,
                        "TABLE",
                        RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE,
                        Integer.toString(poolSize),
                        RoutingSettings.PRIMARY_CONNECTION_TIMEOUT,
                        poolTimeout.toMillis() + "ms",
                        RoutingSettings.METER_REGISTRY,
                        meters));
        final ExecutorService threads = Executors.newFixedThreadPool(writers);
        try (stamped) {
            // Warm up (one write per actor, one at a time), so that only the pool makes anyone wait below.
            for (String actor : actors) {
                writeNoteAs(stamped, actor, "warm-up");
            }
            // An actor without a row in the table still gets its commit's position (writeNoteAs checks it).
            writeNoteAs(stamped, "no-row-" + UUID.randomUUID(), "no stamp row");
            // Trips when as many units of work as the pool has connections are about to commit, holding them all.
            final CyclicBarrier allConnectionsHeld = new CyclicBarrier(poolSize);
            // Every writer commits once per round, holding no connection between rounds: two batches of
            // poolSize per round, so that never fewer writers than poolSize are left to meet.
            final CyclicBarrier roundDone = new CyclicBarrier(writers);
            final Map<String, ConsistencyToken> lastCommits = new java.util.concurrent.ConcurrentHashMap<>();
            final ConcurrentLinkedQueue<Duration> commitTimes = new ConcurrentLinkedQueue<>();
            final List<Future<?>> done = new ArrayList<>();
            for (String actor : actors) {
                done.add(threads.submit(() -> {
                    for (int round = 0; round < rounds; round++) {
                        try (RoutingScope scope =
                                        RoutingScope.builder().actor(actor).open();
                                EntityManager em = stamped.createEntityManager()) {
                            em.getTransaction().begin();
                            em.persist(new Note(actor));
                            em.flush();
                            allConnectionsHeld.await(60, TimeUnit.SECONDS);
                            final long start = System.nanoTime();
                            em.getTransaction().commit();
                            commitTimes.add(Duration.ofNanos(System.nanoTime() - start));
                            lastCommits.put(actor, scope.lastCommit());
                        }
                        roundDone.await(60, TimeUnit.SECONDS);
                    }
                    return null;
                }));
            }
            final List<String> failures = new ArrayList<>();
            for (Future<?> f : done) {
                try {
                    f.get(120, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    Throwable root = e.getCause();
                    while (root.getCause() != null) {
                        root = root.getCause();
                    }
                    failures.add(root.toString());
                }
            }
            assertThat(meters.find("hibernate.routing.actor_stamps.errors").counters().stream()
                            .mapToDouble(Counter::count)
                            .sum())
                    .as("failed stamp updates")
                    .isZero();
            assertThat(failures).as("writers that failed").isEmpty();
            assertThat(commitTimes).as("every commit returned").hasSize(writers * rounds);
            System.out.printf(
                    "the longest of %d commits took %d ms (the pool's timeout: %d ms)%n",
                    commitTimes.size(),
                    commitTimes.stream().max(Duration::compareTo).orElseThrow().toMillis(),
                    poolTimeout.toMillis());
            for (String actor : actors) {
                final ConsistencyToken stamp = ConsistencyToken.ofLsn(
                        stringOnPrimary("select read_after_write_lsn::text from users where id = '" + actor + "'"));
                assertThat(stamp)
                        .as("%s's stamp in the table, after its last commit at %s", actor, lastCommits.get(actor))
                        .isNotNull()
                        .isGreaterThanOrEqualTo(lastCommits.get(actor));
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private static String stringOnPrimary(String sql) throws SQLException {
        try (java.sql.Connection c = cluster.connect(cluster.primary());
                java.sql.Statement statement = c.createStatement();
                ResultSet rs = statement.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    @Test
    void twoInstancesSharingRedis_respectEachOthersWrites_untilTheWindowEndsAndReplicasCatchUp() throws Exception {
        // The paused standby must stay eligible however slow this machine is, so that only the marker keeps
        // the writing key off it.
        final Map<String, Object> shared = Map.of(
                RoutingSettings.REDIS_URI,
                redis.uri(),
                RoutingSettings.REDIS_WINDOW,
                "1s",
                RoutingSettings.REDIS_ALLOW_SHORT_WINDOW,
                "true",
                RoutingSettings.MAX_REPLICA_LAG,
                LAG_BOUND_NO_TEST_REACHES);
        final EntityManagerFactory instanceA = emf(cluster, shared);
        final EntityManagerFactory instanceB = emf(cluster, shared);
        try (instanceA;
                instanceB;
                RedisClient client = RedisClient.create(redis.uri());
                StatefulRedisConnection<String, String> connection = client.connect()) {
            // A Redis seen without data may have lost markers: one window on the primary first.
            awaitActorReadsOnReplicas(instanceA, "service-key-0");
            awaitActorReadsOnReplicas(instanceB, "service-key-0");
            final Node paused = cluster.standby(1);
            cluster.pauseReplay(paused);
            final long id = writeNoteAs(instanceA, "service-key-1", "through A");
            assertThat(connection.sync().hgetall("hibernate-routing:replication:service-key-1"))
                    .as("the marker holds the commit's position, and no pending mutation any more")
                    .containsOnlyKeys("lsn")
                    .hasEntrySatisfying("lsn", lsn -> assertThat(lsn).matches("[0-9a-f]{16}"));
            for (int i = 0; i < 10; i++) {
                assertThat(readNoteAs(instanceB, "service-key-1", null, id))
                        .as("read #%d (%s)", i, routingState(instanceB))
                        .isNotEqualTo(paused);
            }
            assertThat(nodesServing(instanceB, "service-key-2", 10))
                    .as("another key is unaffected (%s)", routingState(instanceB))
                    .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));

            cluster.resumeReplay(paused);
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            runtime(instanceB).checkReplicasNow();
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (connection.sync().exists("hibernate-routing:replication:service-key-1") > 0) {
                assertThat(System.nanoTime())
                        .as("the marker expires after its window (1 s), within 30 s")
                        .isLessThan(deadline);
                Thread.sleep(20); // the poll interval
            }
            assertThat(nodesServing(instanceB, "service-key-1", 10))
                    .as("the marker is gone (%s)", routingState(instanceB))
                    .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
        }
    }

    @Test
    void redisDown_readsUseThePrimary_andMutationsAreRejectedBeforeAnySql_thenBothRecover() throws Exception {
        final EntityManagerFactory withRedis = emf(cluster, RoutingTestSupport.redisWithShortWindow(redis.uri(), "1s"));
        try (withRedis) {
            awaitActorReadsOnReplicas(withRedis, "carol");
            redis.stop();
            try {
                assertThat(nodesServing(withRedis, "carol", 4))
                        .as("marker unreadable: the primary (%s)", routingState(withRedis))
                        .containsExactly(cluster.primary());
                final long before = countOnPrimary(cluster, "note");
                assertThatThrownBy(() -> writeNoteAs(withRedis, "carol", "must not be written"))
                        .hasRootCauseInstanceOf(io.lettuce.core.RedisException.class)
                        .satisfies(e -> assertThat(causeChainHas(e, ConsistencyMarkerException.class))
                                .isTrue());
                assertThat(countOnPrimary(cluster, "note"))
                        .as("nothing was written")
                        .isEqualTo(before);
                try (EntityManager em = withRedis.createEntityManager()) {
                    assertThat(servedBy(cluster, em).isPrimary())
                            .as("reads without an actor need no marker (%s)", routingState(withRedis))
                            .isFalse();
                }
            } finally {
                redis.restart();
            }
            // The library reconnects at most once per command timeout (1 s): wait for it.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (true) {
                try {
                    writeNoteAs(withRedis, "carol", "after Redis came back");
                    break;
                } catch (RuntimeException e) {
                    assertThat(System.nanoTime())
                            .as("mutations work again within 30 s after Redis restarts: %s", e)
                            .isLessThan(deadline);
                    Thread.sleep(50); // the poll interval
                }
            }
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            runtime(withRedis).checkReplicasNow();
            // Redis restarted empty: after one window, reads use replicas again.
            awaitActorReadsOnReplicas(withRedis, "dave");
        }
    }

    /**
     * A scope that stored a pending entry (as the servlet filter does before a mutating request's
     * handler) and ends without a commit removes it, so the actor reads replicas at once; a write
     * that has not committed when its scope ends keeps it, as the entry is all that covers that
     * write until it commits.
     */
    @Test
    void pendingEntryOfAScopeThatCommittedNothing_endsWithTheScope_unlessAWriteAwaitsItsCommit() throws Exception {
        final Map<String, Object> shared = Map.of(
                RoutingSettings.REDIS_URI,
                redis.uri(),
                RoutingSettings.REDIS_WINDOW,
                "1h",
                RoutingSettings.REDIS_ALLOW_SHORT_WINDOW,
                "true",
                RoutingSettings.MAX_REPLICA_LAG,
                LAG_BOUND_NO_TEST_REACHES);
        final String actor = "nothing-" + UUID.randomUUID();
        final String key = "hibernate-routing:replication:" + actor;
        try (EntityManagerFactory instance = emf(cluster, shared);
                RedisClient client = RedisClient.create(redis.uri());
                StatefulRedisConnection<String, String> connection = client.connect()) {
            try (RoutingScope ignored = RoutingScope.builder().actor(actor).open()) {
                ReadYourWrites.beforeMutation(instance, actor);
                assertThat(connection.sync().hkeys(key))
                        .as("stored")
                        .singleElement()
                        .asString()
                        .startsWith("pending:");
            }
            assertThat(connection.sync().exists(key)).as("ended with its scope").isZero();

            final EntityManager open = instance.createEntityManager();
            try {
                try (RoutingScope ignored = RoutingScope.builder().actor(actor).open()) {
                    ReadYourWrites.beforeMutation(instance, actor);
                    open.getTransaction().begin();
                    open.persist(new Note("not committed yet"));
                    open.flush();
                }
                assertThat(connection.sync().hkeys(key))
                        .as("a flushed write awaits its commit: the entry stays")
                        .singleElement()
                        .asString()
                        .startsWith("pending:");
            } finally {
                open.getTransaction().rollback();
                open.close();
            }
        }
    }

    /**
     * Two mutations of one actor run at once through instance A (two requests): M2 stores its pending
     * marker and writes, M1 then writes and commits, and only then M2 commits, but its marker cannot
     * be raised (instance A's Redis user may no longer run scripts, as good as Redis being unreachable
     * for that moment). M1's commit must not have cleared M2's pending state: instance B, reading for
     * the actor, must see M2's write, although the replicas have replayed M1's.
     */
    @Test
    void concurrentMutationsOfOneActor_neverClearEachOthersPendingMarker() throws Exception {
        final String actor = "two-requests-" + UUID.randomUUID();
        final String user = "writer-" + UUID.randomUUID();
        // The paused standbys stay eligible however slow this machine is, so only the marker keeps the actor
        // off them.
        final Map<String, Object> shared = Map.of(
                RoutingSettings.REDIS_URI,
                redis.uri(),
                RoutingSettings.REDIS_WINDOW,
                "8s",
                RoutingSettings.REDIS_ALLOW_SHORT_WINDOW,
                "true",
                RoutingSettings.MAX_REPLICA_LAG,
                LAG_BOUND_NO_TEST_REACHES);
        final Map<String, Object> asWriter = new HashMap<>(shared);
        asWriter.put(RoutingSettings.REDIS_URI, "redis://" + user + ":secret@127.0.0.1:" + redis.port());
        final ExecutorService secondRequest = Executors.newSingleThreadExecutor();
        try (RedisClient client = RedisClient.create(redis.uri());
                StatefulRedisConnection<String, String> admin = client.connect()) {
            admin.sync()
                    .aclSetuser(
                            user,
                            AclSetuserArgs.Builder.on()
                                    .addPassword("secret")
                                    .allKeys()
                                    .allCommands());
            final EntityManagerFactory instanceA = emf(cluster, asWriter);
            final EntityManagerFactory instanceB = emf(cluster, shared);
            try (instanceA;
                    instanceB) {
                // A Redis seen without data may have lost markers: one window on the primary first.
                awaitActorReadsOnReplicas(instanceB, "probe-" + UUID.randomUUID());
                final CountDownLatch m2Written = new CountDownLatch(1);
                final CountDownLatch m2MayCommit = new CountDownLatch(1);
                final Future<Long> m2 = secondRequest.submit(() -> {
                    try (RoutingScope ignored =
                                    RoutingScope.builder().actor(actor).open();
                            EntityManager em = instanceA.createEntityManager()) {
                        // As the servlet filter does before a mutation's handler.
                        ReadYourWrites.beforeMutation(instanceA, actor);
                        em.getTransaction().begin();
                        final Note note = new Note("M2");
                        em.persist(note);
                        em.flush();
                        m2Written.countDown();
                        assertThat(m2MayCommit.await(30, TimeUnit.SECONDS)).isTrue();
                        em.getTransaction().commit();
                        return note.id;
                    }
                });
                assertThat(m2Written.await(30, TimeUnit.SECONDS))
                        .as("M2 has written")
                        .isTrue();
                writeNoteAs(instanceA, actor, "M1");
                // Both standbys replay M1, whose position the marker now holds, then replay nothing more.
                cluster.awaitCaughtUp(Duration.ofSeconds(30));
                cluster.standbys().forEach(cluster::pauseReplay);
                admin.sync().aclSetuser(user, AclSetuserArgs.Builder.removeCategory(AclCategory.SCRIPTING));
                m2MayCommit.countDown();
                final long m2Id = m2.get(60, TimeUnit.SECONDS);
                for (int i = 0; i < 10; i++) {
                    assertThat(readNoteAs(instanceB, actor, null, m2Id).isPrimary())
                            .as(
                                    "M2's marker could not be raised: it stays pending, so the primary (%s)",
                                    routingState(instanceB))
                            .isTrue();
                }
            }
        } finally {
            secondRequest.shutdownNow();
            try (RedisClient client = RedisClient.create(redis.uri());
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                admin.sync().aclDeluser(user);
            }
        }
    }

    /** Waits (bounded) until the actor's reads are served by replicas only, after Redis's start-up window. */
    private static void awaitActorReadsOnReplicas(EntityManagerFactory factory, String actor) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (nodesServing(factory, actor, 4).contains(cluster.primary())) {
            assertThat(System.nanoTime())
                    .as(
                            "%s reads from replicas once the window is over, within 30 s (%s)",
                            actor, routingState(factory))
                    .isLessThan(deadline);
            java.util.concurrent.locks.LockSupport.parkNanos(
                    Duration.ofMillis(100).toNanos()); // the poll interval
        }
    }

    /**
     * While a mutation of the actor is pending (another request of the same actor, here or on another
     * instance), its write may have committed without its position being stored yet. A read that began
     * after that commit must see it: it takes the primary's position when it begins, and a replica that
     * has replayed that far serves it, as the primary would. Standby 1 is paused behind the write, standby
     * 2 has replayed it: every read sees the write, none on standby 1, and the caught-up standby serves.
     * Before, every read of an actor with a pending mutation went to the primary.
     */
    @Test
    void readDuringAPendingMutationWhoseWriteCommitted_seesItOnAReplicaThatReplayedIt() throws Exception {
        final String actor = "pending-committed-" + UUID.randomUUID();
        final Map<String, Object> settings = new HashMap<>(RoutingTestSupport.redisWithShortWindow(redis.uri(), "8s"));
        settings.put(RoutingSettings.MAX_REPLICA_LAG, LAG_BOUND_NO_TEST_REACHES);
        // The wait ends as soon as standby 2 has the position; a long one keeps a slow machine from falling back.
        settings.put(RoutingSettings.LSN_WAIT, "30s");
        try (EntityManagerFactory instance = emf(cluster, settings)) {
            awaitActorReadsOnReplicas(instance, "probe-" + UUID.randomUUID());
            final Node paused = cluster.standby(1);
            cluster.pauseReplay(paused);
            // As a mutating request does before its handler: a pending entry no commit of this instance takes.
            ReadYourWrites.beforeMutation(instance, actor);
            // The mutation's write, committed where no stamp follows it (its request has not answered yet).
            final long id = Long.parseLong(stringOnPrimary(
                    "insert into note values (nextval('note_seq'), 'committed, position not stored') returning id"));
            cluster.awaitReplay(cluster.standby(2), cluster.currentWalLsn(), Duration.ofSeconds(30));
            final Set<Node> served = new HashSet<>();
            for (int i = 0; i < 6; i++) {
                // Another mutation of the actor starts before each read, so that one is pending however slow
                // this machine is (the window, 8 s, counts from the latest).
                ReadYourWrites.beforeMutation(instance, actor);
                served.add(readNoteAs(instance, actor, null, id));
            }
            assertThat(served)
                    .as("never the standby without the write (%s)", routingState(instance))
                    .doesNotContain(paused);
            assertThat(served)
                    .as("the standby that replayed the primary's position serves (%s)", routingState(instance))
                    .contains(cluster.standby(2));
        }
    }

    /** The same with both standbys behind the write: the primary serves, and the read sees it. */
    @Test
    void readDuringAPendingMutationWhoseWriteNoStandbyReplayed_isServedByThePrimary() throws Exception {
        final String actor = "pending-behind-" + UUID.randomUUID();
        final Map<String, Object> settings = new HashMap<>(RoutingTestSupport.redisWithShortWindow(redis.uri(), "8s"));
        settings.put(RoutingSettings.MAX_REPLICA_LAG, LAG_BOUND_NO_TEST_REACHES);
        try (EntityManagerFactory instance = emf(cluster, settings)) {
            awaitActorReadsOnReplicas(instance, "probe-" + UUID.randomUUID());
            cluster.standbys().forEach(cluster::pauseReplay);
            ReadYourWrites.beforeMutation(instance, actor);
            final long id = Long.parseLong(stringOnPrimary(
                    "insert into note values (nextval('note_seq'), 'committed, no standby has it') returning id"));
            for (int i = 0; i < 3; i++) {
                ReadYourWrites.beforeMutation(instance, actor);
                assertThat(readNoteAs(instance, actor, null, id))
                        .as("read #%d (%s)", i, routingState(instance))
                        .isEqualTo(cluster.primary());
            }
        }
    }

    @Test
    void redisThatLostItsData_sendsActorsToThePrimaryForOneWindow() throws Exception {
        final EntityManagerFactory withRedis = emf(cluster, RoutingTestSupport.redisWithShortWindow(redis.uri(), "2s"));
        try (withRedis;
                RedisClient client = RedisClient.create(redis.uri());
                StatefulRedisConnection<String, String> connection = client.connect()) {
            awaitActorReadsOnReplicas(withRedis, "erin");
            connection.sync().flushall();
            assertThat(nodesServing(withRedis, "erin", 4))
                    .as("markers may have been lost: the primary (%s)", routingState(withRedis))
                    .containsExactly(cluster.primary());
            assertThat(connection.sync().hgetall("hibernate-routing:alive"))
                    .as("the loss was noticed and the window started, for this Redis process")
                    .containsKeys("run_id", "since")
                    .containsEntry("run_id", runId(connection));
            awaitActorReadsOnReplicas(withRedis, "erin");
        }
    }

    /** The run id of the Redis process {@code connection} talks to. */
    private static String runId(StatefulRedisConnection<String, String> connection) {
        return connection
                .sync()
                .info("server")
                .lines()
                .filter(line -> line.startsWith("run_id:"))
                .map(line -> line.substring("run_id:".length()).trim())
                .findFirst()
                .orElseThrow();
    }

    private static boolean causeChainHas(Throwable e, Class<? extends Throwable> type) {
        return RoutingItSupport.causeOfType(e, type) != null;
    }

    @Test
    void stampedMessage_isHandledOnAReplicaOnlyOnceItHasTheWrite() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final long id = writeNoteAs(emf, "publisher", "message payload");
        final ConsistencyToken stamp = ReadYourWrites.currentPosition(emf);
        // Standby 2 has the write, and the library knows it: the worker waits only 100 ms for a replica to get
        // there, which a slow machine can take.
        cluster.awaitReplay(cluster.standby(2), LogSequenceNumber.valueOf(stamp.position()), Duration.ofSeconds(30));
        runtime(emf).checkReplicasNow();
        final StampedWork work = StampedWork.builder(emf).build();
        for (int i = 0; i < 10; i++) {
            final Node node = work.call(stamp, 1, () -> readNoteAs(emf, "worker", null, id));
            assertThat(node)
                    .as("message #%d (%s)", i, routingState(emf))
                    .isNotEqualTo(paused)
                    .isNotEqualTo(cluster.primary());
        }
    }

    @Test
    void stampedMessage_withEveryReplicaBehind_fallsBackOrAsksForARetry_asConfigured() {
        cluster.standbys().forEach(cluster::pauseReplay);
        final long id = writeNoteAs(emf, "publisher", "message payload");
        final ConsistencyToken stamp = ReadYourWrites.currentPosition(emf);

        final Node fallback =
                StampedWork.builder(emf).build().call(stamp, 1, () -> readNoteAs(emf, "worker", null, id));
        assertThat(fallback).isEqualTo(cluster.primary());

        final StampedWork retrying = StampedWork.builder(emf)
                .whenBehind(StampedWork.WhenBehind.RETRY)
                .retryBackoff(Duration.ofMillis(500), Duration.ofSeconds(3))
                .build();
        final AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> retrying.run(stamp, 1, () -> ran.set(true)))
                .isInstanceOf(RetryLaterException.class)
                .satisfies(
                        e -> assertThat(((RetryLaterException) e).retryAfter()).isEqualTo(Duration.ofMillis(500)));
        assertThatThrownBy(() -> retrying.run(stamp, 3, () -> ran.set(true)))
                .satisfies(
                        e -> assertThat(((RetryLaterException) e).retryAfter()).isEqualTo(Duration.ofSeconds(2)));
        assertThatThrownBy(() -> retrying.run(stamp, 9, () -> ran.set(true)))
                .satisfies(
                        e -> assertThat(((RetryLaterException) e).retryAfter()).isEqualTo(Duration.ofSeconds(3)));
        assertThat(ran).as("the handler never ran").isFalse();

        cluster.resumeAll();
        // Once the library knows the standbys caught up: right after a timeout it treats them as standing
        // still until it sees them replay again (its health check, or a gate check 100 ms later).
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        runtime(emf).checkReplicasNow();
        final Node afterCatchUp = retrying.call(stamp, 4, () -> readNoteAs(emf, "worker", null, id));
        assertThat(afterCatchUp.isPrimary())
                .as("once caught up, a replica (%s)", routingState(emf))
                .isFalse();
    }

    @Test
    void steadyState_theGateAddsNoRoundTrips_butAsksWhenAPositionIsUnknown() throws Exception {
        final EntityManagerFactory quiet = emf(cluster, Map.of(RoutingSettings.HEALTH_CHECK_INTERVAL, "1h"));
        try (quiet) {
            writeNoteAs(quiet, "steady", "steady");
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            runtime(quiet).checkReplicasNow();
            final Map<Node, Long> logSizes = logSizes();
            assertThat(nodesServing(quiet, "steady", 20))
                    .as("replicas (%s)", routingState(quiet))
                    .noneMatch(Node::isPrimary);
            assertThat(gateQueriesSince(logSizes))
                    .as("gate checks in steady state")
                    .isZero();

            writeNoteAs(quiet, "steady", "new position, not yet known to have been replayed");
            // Replayed, but the library does not know it (no health check for an hour): it must ask. That the
            // standbys have it spares the read the gate's 100 ms wait for them, which a slow machine can exceed.
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            final Map<Node, Long> again = logSizes();
            assertThat(nodesServing(quiet, "steady", 1))
                    .as("a replica, found by asking (%s)", routingState(quiet))
                    .noneMatch(Node::isPrimary);
            assertThat(gateQueriesSince(again))
                    .as("the gate asks the replicas when it must")
                    .isPositive();
        }
    }

    private static Map<Node, Long> logSizes() throws IOException {
        final Map<Node, Long> sizes = new HashMap<>();
        for (Node standby : cluster.standbys()) {
            sizes.put(standby, Files.size(standby.logFile()));
        }
        return sizes;
    }

    private static long gateQueriesSince(Map<Node, Long> sizes) throws IOException {
        long count = 0;
        for (Map.Entry<Node, Long> entry : sizes.entrySet()) {
            final byte[] log = Files.readAllBytes(entry.getKey().logFile());
            final String tail = new String(
                    log,
                    entry.getValue().intValue(),
                    log.length - entry.getValue().intValue());
            count += tail.lines()
                    .filter(line -> line.contains("hibernate-routing lsn-gate"))
                    .count();
        }
        return count;
    }
}
