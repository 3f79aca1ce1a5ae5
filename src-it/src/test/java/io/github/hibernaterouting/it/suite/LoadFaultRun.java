package io.github.hibernaterouting.it.suite;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The HTTP load runs (docs/verification.md, "Load and fault run" and "Mixed load run"): the sample in
 * two JVM processes (A and B) on a primary, two streaming standbys and Redis; {@code clients} client
 * threads, {@code clientsPerActor} of them for each actor (one user and API key), each sending its
 * requests alternately to A and B for a bounded time. {@link Workload#FAULTS}: meanwhile standby1 is
 * killed and restarted, replay is paused and resumed, and Redis is restarted. {@link Workload#MIXED}:
 * no faults, rounds of one POST to nine GETs. Every request and every acknowledged write is recorded;
 * afterwards the history is checked against the primary: lost writes, read-your-writes violations, 5xx
 * by cause (documented or not), latency, the share of reads served by replicas, and what the routing
 * meters of each process counted during the load.
 */
final class LoadFaultRun {
    /** What the clients send, and whether faults are injected meanwhile. */
    enum Workload {
        /** The fault run's random mix of reads and writes, with the faults of {@link #injectFaultsInOrder}. */
        FAULTS,
        /**
         * No faults; rounds of one POST, the GET of the new note right after it, and eight GETs, each either of one
         * of the client's earlier notes or of the list: the mix in which concurrent requests of one actor showed.
         */
        MIXED
    }

    /**
     * @param reportDir where report.md and logs/ go (emptied first)
     * @param workload what the clients send, and whether faults are injected
     * @param clients client threads
     * @param clientsPerActor client threads that share one actor (user and API key): more than one sends requests of
     *     the same actor at the same time
     * @param duration how long the clients send requests
     * @param primaryPool the primary pool of each process ({@code hibernate.routing.primary.maximum_pool_size})
     * @param poolTimeout how long a request waits for a primary connection ({@code primary.connection_timeout})
     * @param seed the random seed of the clients' choices
     */
    record Options(
            Path reportDir,
            Workload workload,
            int clients,
            int clientsPerActor,
            Duration duration,
            int primaryPool,
            Duration poolTimeout,
            long seed) {}

    /** A fault and when it was injected, in milliseconds since the clients started. */
    record Fault(String what, long atMillis, long doneMillis) {}

    /** One HTTP request and its outcome; {@code expected} is the status a correct run answers (0: any 2xx). */
    record Op(
            int client,
            String kind,
            String method,
            String path,
            String instance,
            String requestId,
            long startMillis,
            long endMillis,
            long nanos,
            int status,
            int expected,
            String servedBy,
            String error) {
        boolean isRead() {
            return method.equals("GET");
        }

        boolean isServerError() {
            return status >= 500 || status < 0;
        }
    }

    /** A read that did not show the actor's own acknowledged write. */
    record Violation(Op op, long noteId, String expected, String got) {}

    /** An acknowledged write the primary does not have at the end. */
    record Lost(int client, long noteId, String expected, String found) {}

    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*(\\d+)");
    private static final Pattern TITLE = Pattern.compile("\"title\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern ERROR = Pattern.compile("\"error\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Duration PROCESS_START = Duration.ofSeconds(150);
    /** How long, after the load, each process may take to store Redis markers again (if it did not during the load). */
    private static final Duration MUTATIONS_BACK = Duration.ofSeconds(30);
    /** How long a phase between faults may wait for its first answered read, and the load for the last phase's. */
    private static final Duration PHASE_LOAD = Duration.ofSeconds(30);
    /** The first user id of the extra actors; the seeded users are 1 (demo-alice), 2 (demo-bob), 3 (read-only). */
    static final long FIRST_LOAD_USER = 101;

    final Options options;
    final Map<String, String> servers = new LinkedHashMap<>();
    final List<Fault> faults = new ArrayList<>();
    final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Violation> violations = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<String> unknownOutcomeTitles = new ConcurrentLinkedQueue<>();
    final List<Lost> lost = new ArrayList<>();
    final Map<String, Integer> primaryPoolMaximum = new LinkedHashMap<>();
    /** The pool maximum of replica1 in each process, by its /status: how many of its connections a kill can break. */
    final Map<String, Integer> replica1PoolMaximum = new LinkedHashMap<>();
    /**
     * Per process: ms after Redis answered PING again until a mutation through it was acknowledged (during the load, or
     * by the probe after it), or an explanation of why none was.
     */
    final Map<String, String> mutationsBack = new LinkedHashMap<>();
    /** What each process's routing meters counted during the load. */
    final RoutingMeters meters = new RoutingMeters();

    int acknowledgedWrites;
    int unacknowledgedWritesThatCommitted;
    int notesChecked;
    long runMillis;
    String setupError;
    private final Path logDir;
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private PostgresCluster cluster;
    private RedisServer redis;
    private SampleProcess a;
    private SampleProcess b;
    private final List<Client> clients = new ArrayList<>();
    private long loadStart;
    private Set<Op> replicaDeaths;
    /** The latest start (ms since the start) of a read that got its answer. */
    private final AtomicLong lastAnsweredReadStart = new AtomicLong(-1);
    /** When the latest fault was injected, ms since the start. */
    private volatile long lastFaultAt;

    private volatile boolean faultsDone;

    private LoadFaultRun(Options options) {
        this.options = options;
        this.logDir = options.reportDir().resolve("logs");
    }

    /** Runs everything and writes the report; a failed setup is in {@link #setupError}. */
    static LoadFaultRun run(Options options) throws IOException {
        final LoadFaultRun run = new LoadFaultRun(options);
        deleteTree(options.reportDir());
        Files.createDirectories(run.logDir);
        try {
            run.setUp();
            run.readMeters(run.meters::before);
            run.load();
            run.readMeters(run.meters::after);
            run.awaitMutationsBack();
            run.checkPrimary();
        } catch (Throwable t) {
            if (run.setupError == null) {
                run.setupError = SuiteReport.stackTrace(t, 15);
            }
        } finally {
            run.tearDown();
            Files.writeString(options.reportDir().resolve("report.md"), run.markdown(), StandardCharsets.UTF_8);
            Files.writeString(options.reportDir().resolve("ops.csv"), run.csv(), StandardCharsets.UTF_8);
        }
        return run;
    }

    // ---------------------------------------------------------------- setup

    private void setUp() throws Exception {
        cluster = PostgresCluster.builder()
                .standbys(2)
                .startTimeout(Duration.ofSeconds(120))
                .start();
        redis = RedisServer.start();
        servers.put("primary", cluster.primary().jdbcUrl());
        servers.put("replica1", cluster.standby(1).jdbcUrl());
        servers.put("replica2", cluster.standby(2).jdbcUrl());
        servers.put("redis", redis.uri());

        final String classpath = Files.readString(
                        Path.of(System.getProperty("replica.sampleClasspathFile", "target/sample-classpath.txt")))
                .trim();
        final Path webapp = Path.of(System.getProperty("replica.sampleWebapp", "../jakarta-ee-sample/src/main/webapp"))
                .toAbsolutePath()
                .normalize();
        final Map<String, String> env = new LinkedHashMap<>();
        env.put("SAMPLE_PRIMARY_URL", cluster.primary().jdbcUrl());
        env.put(
                "HIBERNATE_ROUTING_REPLICA_URLS",
                cluster.standby(1).jdbcUrl() + "," + cluster.standby(2).jdbcUrl());
        env.put("SAMPLE_DB_USER", cluster.user());
        env.put("SAMPLE_DB_PASSWORD", cluster.password());
        env.put("HIBERNATE_ROUTING_REDIS_URI", redis.uri());
        final List<String> jvm = List.of(
                "-Dhibernate.routing.primary.maximum_pool_size=" + options.primaryPool(),
                // A fixed-size pool (HikariCP's advice): the run measures exhaustion, not how fast a pool grows.
                "-Dhibernate.routing.primary.minimum_idle=" + options.primaryPool(),
                "-Dhibernate.routing.primary.connection_timeout="
                        + options.poolTimeout().toMillis() + "ms");
        // Both at once, on the empty database: the schema step is safe against concurrent starts.
        final ExecutorService starter = Executors.newFixedThreadPool(2);
        try {
            final var startA = starter.submit(() -> SampleProcess.start(
                    "A", classpath, webapp, env, jvm, logDir.resolve("sample-process-A.log"), PROCESS_START));
            final var startB = starter.submit(() -> SampleProcess.start(
                    "B", classpath, webapp, env, jvm, logDir.resolve("sample-process-B.log"), PROCESS_START));
            try {
                a = startA.get();
            } finally {
                b = startB.get();
            }
        } finally {
            starter.shutdownNow();
        }
        servers.put("process A", a.uri() + " (pid " + a.pid() + ")");
        servers.put("process B", b.uri() + " (pid " + b.pid() + ")");

        // The actors: demo-alice, demo-bob and more users like them.
        try (Connection c = cluster.connect(cluster.primary());
                PreparedStatement insert = c.prepareStatement("insert into users (id, api_key, name, can_write)"
                        + " values (?, ?, ?, true) on conflict (id) do nothing")) {
            for (int i = 0; i < options.clients(); i++) {
                final Client client = new Client(i, options.seed() + i);
                if (client.userId >= FIRST_LOAD_USER) {
                    insert.setLong(1, client.userId);
                    insert.setString(2, client.key);
                    insert.setString(3, "Load actor " + client.actor);
                    insert.executeUpdate();
                }
                clients.add(client);
            }
        }
        for (SampleProcess p : List.of(a, b)) {
            final String status = get(p.uri().resolve("status"), null).body();
            primaryPoolMaximum.put(p.name, poolMaximum(status, "primary"));
            replica1PoolMaximum.put(p.name, poolMaximum(status, "replica1"));
        }
        warmUp();
    }

    /** Until both processes serve an actor's read from a replica (the first marker window after meeting Redis). */
    private void warmUp() throws Exception {
        final Client bob = clients.get(1);
        final HttpResponse<String> created =
                send(a.uri(), "POST", "api/notes", bob.key, "{\"title\":\"warm-up\",\"body\":\"warm\"}", "warm-up");
        if (created.statusCode() != 201) {
            throw new IllegalStateException("warm-up POST answered " + created.statusCode() + ": " + created.body());
        }
        final long id = id(created.body());
        cluster.awaitCaughtUp(Duration.ofSeconds(60));
        final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        boolean aOnReplica = false;
        boolean bOnReplica = false;
        while (!(aOnReplica && bOnReplica)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("reads did not reach a replica in both processes within 60 s");
            }
            aOnReplica |= onReplica(get(a.uri().resolve("api/notes/" + id), bob.key));
            bOnReplica |= onReplica(get(b.uri().resolve("api/notes/" + id), bob.key));
            Thread.sleep(250); // poll interval
        }
    }

    /** The {@code pool.maximum} of node {@code name} in a /status answer, -1 if it has none. */
    private static int poolMaximum(String status, String name) {
        final Matcher m = Pattern.compile(
                        "\"name\"\\s*:\\s*\"" + name + "\"[^}]*?\"pool\"\\s*:\\s*\\{[^}]*\"maximum\"\\s*:\\s*(\\d+)")
                .matcher(status);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    // ---------------------------------------------------------------- the run

    private void load() throws Exception {
        final long start = System.nanoTime();
        loadStart = start;
        final long deadline = start + options.duration().toNanos();
        final ExecutorService pool = Executors.newFixedThreadPool(options.clients());
        final List<CompletableFuture<Void>> running = new ArrayList<>();
        faultsDone = options.workload() != Workload.FAULTS;
        for (Client client : clients) {
            running.add(CompletableFuture.runAsync(() -> client.run(start, deadline), pool));
        }
        try {
            if (options.workload() == Workload.FAULTS) {
                injectFaults(start);
            }
            CompletableFuture.allOf(running.toArray(CompletableFuture[]::new))
                    .get(options.duration().plus(PHASE_LOAD).toSeconds() + 120, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
            runMillis = millisSince(start);
        }
    }

    /**
     * The faults, at fixed times after the start (or later: each phase between two faults lasts until a read that
     * started in it was answered, so that every fault meets load whatever the machine's speed): one at a time, so
     * that each 5xx can be told apart.
     */
    private void injectFaults(long start) throws Exception {
        try {
            injectFaultsInOrder(start);
        } finally {
            faultsDone = true;
        }
    }

    private void injectFaultsInOrder(long start) throws Exception {
        final Node standby1 = cluster.standby(1);
        final Node standby2 = cluster.standby(2);
        sleepUntil(start, 10_000);
        fault(start, "standby1 killed (SIGKILL)", () -> cluster.kill(standby1));
        sleepUntil(start, 18_000);
        fault(start, "standby1 started (waits until it streams)", () -> cluster.start(standby1));
        sleepUntil(start, 28_000);
        fault(start, "replay paused on standby2", () -> cluster.pauseReplay(standby2));
        sleepUntil(start, 36_000);
        fault(start, "replay resumed on standby2", () -> cluster.resumeReplay(standby2));
        sleepUntil(start, 40_000);
        fault(start, "replay paused on both standbys", () -> {
            cluster.pauseReplay(standby1);
            cluster.pauseReplay(standby2);
        });
        sleepUntil(start, 45_000);
        fault(start, "replay resumed on both standbys", cluster::resumeAll);
        sleepUntil(start, 50_000);
        fault(start, "Redis stopped", redis::stop);
        sleepUntil(start, 53_000);
        fault(start, "Redis restarted (empty; waits for PING)", redis::restart);
    }

    private void fault(long start, String what, Runnable action) throws InterruptedException {
        awaitLoadSince(lastFaultAt);
        final long at = millisSince(start);
        action.run();
        synchronized (faults) {
            faults.add(new Fault(what, at, millisSince(start)));
        }
        lastFaultAt = at;
    }

    /**
     * Waits (at most {@link #PHASE_LOAD}) until a read that started at or after {@code millis} since the start was
     * answered: the phase since then had load. If none is, the run goes on and {@link #phasesWithoutAnsweredReads}
     * reports the phase.
     */
    private void awaitLoadSince(long millis) throws InterruptedException {
        final long deadline = System.nanoTime() + PHASE_LOAD.toNanos();
        while (lastAnsweredReadStart.get() < millis && System.nanoTime() < deadline) {
            Thread.sleep(20); // poll interval
        }
    }

    /** Paces the fault schedule: waits until {@code millis} after the start (at once if that is past). */
    private static void sleepUntil(long start, long millis) throws InterruptedException {
        final long wait = millis - millisSince(start);
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    /**
     * Per process, when mutations were acknowledged again after the Redis restart: the first such mutation of the
     * load, or else (the load ended first) a mutation sent now, retried until it is, for at most
     * {@link #MUTATIONS_BACK}. Refused mutations count as documented only until then.
     */
    private void awaitMutationsBack() throws Exception {
        final Fault restarted = fault("Redis restarted");
        if (restarted == null) {
            return;
        }
        final Client bob = clients.get(1);
        for (SampleProcess p : List.of(a, b)) {
            final long back = backAfterRedisRestart(p.name);
            if (back != Long.MAX_VALUE) {
                mutationsBack.put(p.name, (back - restarted.doneMillis()) + " ms (during the load)");
                continue;
            }
            final long deadline = System.nanoTime() + MUTATIONS_BACK.toNanos();
            HttpResponse<String> created;
            while ((created = send(
                                    p.uri(),
                                    "POST",
                                    "api/notes",
                                    bob.key,
                                    "{\"title\":\"after the load\",\"body\":\"marker probe\"}",
                                    "after-load-" + p.name))
                            .statusCode()
                    != 201) {
                if (System.nanoTime() > deadline) {
                    break;
                }
                Thread.sleep(250); // poll interval
            }
            mutationsBack.put(
                    p.name,
                    created.statusCode() == 201
                            ? "after the load (" + millisSince(loadStart) + " ms after the start)"
                            : "not within " + MUTATIONS_BACK.toSeconds() + " s after the load: " + created.statusCode()
                                    + " " + created.body());
        }
    }

    /**
     * The end (ms since the start) of the first mutation through {@code instance} that started after Redis answered
     * again and was acknowledged: by then the process stores markers again. {@link Long#MAX_VALUE} if there was none.
     */
    private long backAfterRedisRestart(String instance) {
        final Fault restarted = fault("Redis restarted");
        if (restarted == null) {
            return Long.MAX_VALUE;
        }
        return ops.stream()
                .filter(op -> op.instance().equals(instance)
                        && !op.isRead()
                        && op.startMillis() >= restarted.doneMillis()
                        && op.status() >= 200
                        && op.status() < 300)
                .mapToLong(Op::endMillis)
                .min()
                .orElse(Long.MAX_VALUE);
    }

    /** The processes that did not take mutations again after the Redis restart (see {@link #mutationsBack}). */
    List<String> notBackAfterRedisRestart() {
        return mutationsBack.entrySet().stream()
                .filter(e -> e.getValue().startsWith("not "))
                .map(e -> e.getKey() + ": " + e.getValue())
                .toList();
    }

    /**
     * The counters of both processes' {@code /metrics}, handed to {@code reader} (a process whose page cannot be read
     * is noted in {@link #meters}, not an error of the run).
     */
    private void readMeters(BiConsumer<String, String> reader) throws InterruptedException {
        for (SampleProcess p : List.of(a, b)) {
            try {
                final HttpResponse<String> page = get(p.uri().resolve("metrics"), null);
                if (page.statusCode() == 200) {
                    reader.accept(p.name, page.body());
                } else {
                    meters.unreadable(p.name, "/metrics answered " + page.statusCode());
                }
            } catch (IOException e) {
                meters.unreadable(p.name, "/metrics: " + e);
            }
        }
    }

    /**
     * One client thread: the notes it created, its own random choices, requests alternately to A and B. Its actor
     * may be shared with other clients; each reads back only the notes it created itself.
     */
    private final class Client {
        final int index;
        final int actor;
        final long userId;
        final String key;
        final Random random;
        final Map<Long, NoteState> notes = new LinkedHashMap<>();
        int sent;

        Client(int index, long seed) {
            this.index = index;
            this.actor = index / options.clientsPerActor();
            this.userId = actor == 0 ? 1 : actor == 1 ? 2 : FIRST_LOAD_USER + actor;
            this.key = actor == 0 ? "demo-alice" : actor == 1 ? "demo-bob" : "load-actor-" + actor;
            this.random = new Random(seed);
            this.sent = random.nextInt(2);
        }

        /**
         * Until {@code deadline}, and past it while faults are still injected or the phase after the last one had no
         * answered read yet (for at most {@link #PHASE_LOAD} more).
         */
        void run(long start, long deadline) {
            final long latest = deadline + PHASE_LOAD.toNanos();
            while (System.nanoTime() < deadline
                    || (!faultsDone || lastAnsweredReadStart.get() < lastFaultAt) && System.nanoTime() < latest) {
                try {
                    step(start);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        /** The next instance: A, B, A, … so that a write through one is read back through the other. */
        SampleProcess next() {
            return sent++ % 2 == 0 ? a : b;
        }

        private void step(long start) throws InterruptedException {
            if (options.workload() == Workload.MIXED) {
                mixedRound(start);
                return;
            }
            final double r = random.nextDouble();
            final List<NoteState> live = notes.values().stream()
                    .filter(n -> !n.deleted && !n.uncertain)
                    .toList();
            if (live.isEmpty() || r < 0.25) {
                create(start);
            } else if (r < 0.35) {
                patch(start, live.get(random.nextInt(live.size())));
            } else if (r < 0.40 && live.size() > 3) {
                delete(start, live.get(0));
            } else if (r < 0.65) {
                readOwn(start, "read own note", "api/notes/", pickForRead(), next());
            } else if (r < 0.75) {
                readOwn(start, "read own note (native SQL)", "api/raw/notes/", pickForRead(), next());
            } else if (r < 0.95) {
                request(start, "list (STALE_READ)", next(), "GET", "api/notes?limit=20", null);
            } else {
                request(start, "account (PRIMARY)", next(), "GET", "api/me", null);
            }
        }

        /** One POST, the read of the new note right after it, then eight GETs of earlier notes or of the list. */
        private void mixedRound(long start) throws InterruptedException {
            final List<NoteState> earlier =
                    notes.values().stream().filter(n -> !n.uncertain).toList();
            create(start);
            for (int i = 0; i < 8; i++) {
                if (!earlier.isEmpty() && random.nextBoolean()) {
                    readOwn(start, "read own note", "api/notes/", earlier.get(random.nextInt(earlier.size())), next());
                } else {
                    request(start, "list (STALE_READ)", next(), "GET", "api/notes?limit=20", null);
                }
            }
            // Ten requests a round: without this, each client's POSTs would all go to the same process.
            sent++;
        }

        private NoteState pickForRead() {
            final List<NoteState> candidates =
                    notes.values().stream().filter(n -> !n.uncertain).toList();
            return candidates.get(random.nextInt(candidates.size()));
        }

        private void create(long start) throws InterruptedException {
            final String title = "c" + index + "-" + notes.size() + "-" + Long.toHexString(random.nextLong());
            final String json =
                    "{\"title\":\"" + title + "\",\"body\":\"load run words " + random.nextInt(1000) + "\"}";
            final Response response = request(start, "create", next(), "POST", "api/notes", json);
            if (response.status == 201) {
                final NoteState note = new NoteState(id(response.body), title);
                notes.put(note.id, note);
                readOwn(start, "read back after create", "api/notes/", note, next());
            } else if (response.status >= 500 || response.status < 0) {
                unknownOutcomeTitles.add(title);
            }
        }

        private void patch(long start, NoteState note) throws InterruptedException {
            final String title = "p" + index + "-" + note.id + "-" + Long.toHexString(random.nextLong());
            final Response response =
                    request(start, "update", next(), "PATCH", "api/notes/" + note.id, "{\"title\":\"" + title + "\"}");
            if (response.status == 200) {
                note.title = title;
                readOwn(start, "read back after update", "api/notes/", note, next());
            } else if (response.status >= 500 || response.status < 0) {
                // Maybe committed, maybe not: no later check can tell which title is right.
                note.uncertain = true;
            }
        }

        private void delete(long start, NoteState note) throws InterruptedException {
            final Response response = request(start, "delete", next(), "DELETE", "api/notes/" + note.id, null);
            if (response.status == 204) {
                note.deleted = true;
                readOwn(start, "read back after delete", "api/notes/", note, next());
            } else if (response.status >= 500 || response.status < 0) {
                note.uncertain = true;
            }
        }

        /** A read of one of the actor's own notes: it must show the actor's last acknowledged write of it. */
        private void readOwn(long start, String kind, String prefix, NoteState note, SampleProcess instance)
                throws InterruptedException {
            final String expected = note.deleted ? "404" : note.title;
            final Response response =
                    request(start, kind, instance, "GET", prefix + note.id, null, note.deleted ? 404 : 200);
            if (response.status >= 500 || response.status < 0) {
                return; // counted as a 5xx, not as a read
            }
            final String got;
            if (response.status == 200) {
                final Matcher m = TITLE.matcher(response.body);
                got = m.find() ? m.group(1) : "(no title) " + response.body;
            } else {
                got = Integer.toString(response.status);
            }
            if (!expected.equals(got)) {
                violations.add(new Violation(response.op, note.id, expected, got));
            }
        }

        private Response request(
                long start, String kind, SampleProcess instance, String method, String path, String json)
                throws InterruptedException {
            return request(start, kind, instance, method, path, json, 0);
        }

        private Response request(
                long start, String kind, SampleProcess instance, String method, String path, String json, int expected)
                throws InterruptedException {
            final String requestId = "lt-" + index + "-" + sent;
            final long begin = System.nanoTime();
            int status;
            String body = "";
            String servedBy = null;
            String error = null;
            try {
                final HttpResponse<String> response = send(instance.uri(), method, path, key, json, requestId);
                status = response.statusCode();
                body = response.body();
                servedBy = response.headers().firstValue("X-Served-By").orElse(null);
                if (status >= 400) {
                    final Matcher m = ERROR.matcher(body);
                    error = m.find() ? m.group(1) : body.length() > 200 ? body.substring(0, 200) : body;
                }
            } catch (IOException e) {
                status = -1;
                error = "client: " + e;
            }
            final long end = System.nanoTime();
            final Op op = new Op(
                    index,
                    kind,
                    method,
                    path,
                    instance.name,
                    requestId,
                    TimeUnit.NANOSECONDS.toMillis(begin - start),
                    TimeUnit.NANOSECONDS.toMillis(end - start),
                    end - begin,
                    status,
                    expected,
                    servedBy,
                    error);
            ops.add(op);
            if (op.isRead() && answered(op)) {
                lastAnsweredReadStart.accumulateAndGet(op.startMillis(), Math::max);
            }
            return new Response(op, status, body);
        }
    }

    /** What the actor knows of one of its notes. */
    private static final class NoteState {
        final long id;
        String title;
        boolean deleted;
        /** A change of it failed with an unknown outcome: no longer read, changed or counted. */
        boolean uncertain;

        NoteState(long id, String title) {
            this.id = id;
            this.title = title;
        }
    }

    private record Response(Op op, int status, String body) {}

    // ---------------------------------------------------------------- after the run

    /** Every acknowledged write is on the primary: created and updated notes with their title, deleted ones gone. */
    private void checkPrimary() throws SQLException {
        cluster.resumeAll();
        final Map<Long, String> titles = new HashMap<>();
        final List<String> allTitles = new ArrayList<>();
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("select id, title from notes")) {
            while (rs.next()) {
                titles.put(rs.getLong(1), rs.getString(2));
                allTitles.add(rs.getString(2));
            }
        }
        for (Client client : clients) {
            for (NoteState note : client.notes.values()) {
                acknowledgedWrites++;
                if (note.uncertain) {
                    continue;
                }
                notesChecked++;
                final String found = titles.get(note.id);
                if (note.deleted ? found != null : !note.title.equals(found)) {
                    lost.add(new Lost(client.index, note.id, note.deleted ? "(deleted)" : note.title, found));
                }
            }
        }
        for (String title : unknownOutcomeTitles) {
            if (allTitles.contains(title)) {
                unacknowledgedWritesThatCommitted++;
            }
        }
    }

    // ---------------------------------------------------------------- classification

    /** The cause of a 5xx (or of a request that got no answer), from the API's JSON error. */
    static String cause(Op op) {
        final String error = op.error() == null ? "" : op.error();
        if (op.status() < 0) {
            return "no answer (" + error.replaceAll("^client: ([\\w.]+).*", "$1") + ")";
        }
        if (error.contains("consistency marker")) {
            return "503 Redis marker not stored";
        }
        if (error.contains("went away") || error.contains("could not be reached")) {
            return "503 database server unreachable or gone";
        }
        if (error.contains("No database connection became free")) {
            return "503 pool timeout";
        }
        if (error.contains("collided")) {
            return "503 conflict or timeout, rolled back";
        }
        return op.status() + " " + (error.length() > 60 ? error.substring(0, 60) + "…" : error);
    }

    /**
     * Whether a 5xx is one of the documented cases, by cause, not by how long the library took to react:
     *
     * <ul>
     * <li>a read whose own replica died mid-request: it was running on standby1 when it was killed, or was handed one
     * of its dead pooled connections before the health check took it out; so it failed with "server gone" while
     * standby1 was down, and at most one read per pooled connection of replica1 in that process fails so (the library
     * runs nothing on a failed replica again; {@link #replicaDeaths});</li>
     * <li>a mutation refused with 503 because the Redis marker could not be stored: it ended after Redis stopped and
     * started before its process stored markers again after the restart ({@link #backAfterRedisRestart}; a process
     * that never did fails the run, {@link #notBackAfterRedisRestart}).</li>
     * </ul>
     */
    String documented(Op op) {
        final String cause = cause(op);
        if (replicaDeaths().contains(op)) {
            return "replica died mid-request";
        }
        final Fault stopped = fault("Redis stopped");
        final Fault restarted = fault("Redis restarted");
        if (stopped != null
                && restarted != null
                && !op.isRead()
                && cause.startsWith("503 Redis marker")
                && op.endMillis() >= stopped.atMillis()
                && op.startMillis() <= backAfterRedisRestart(op.instance())) {
            return "Redis restarting (mutation refused before it ran)";
        }
        return null;
    }

    /**
     * The reads that failed because standby1 died under them: answered "server gone" while standby1 was down (ended
     * after the kill, started before it was started again), per process at most as many as replica1's pool holds
     * connections, the first ones by their start. Computed once, after the load.
     */
    private synchronized Set<Op> replicaDeaths() {
        if (replicaDeaths == null) {
            final Fault kill = fault("standby1 killed");
            final Fault started = fault("standby1 started");
            final Set<Op> deaths = new HashSet<>();
            if (kill != null) {
                final long downUntil = started != null ? started.doneMillis() : Long.MAX_VALUE;
                ops.stream()
                        .filter(op -> op.isRead()
                                && cause(op).startsWith("503 database server unreachable")
                                && op.endMillis() >= kill.atMillis()
                                && op.startMillis() <= downUntil)
                        .collect(Collectors.groupingBy(Op::instance))
                        .forEach((instance, failed) -> failed.stream()
                                .sorted(Comparator.comparingLong(Op::startMillis))
                                .limit(Math.max(0, replica1PoolMaximum.getOrDefault(instance, 0)))
                                .forEach(deaths::add));
            }
            replicaDeaths = deaths;
        }
        return replicaDeaths;
    }

    private Fault fault(String prefix) {
        synchronized (faults) {
            return faults.stream()
                    .filter(f -> f.what().startsWith(prefix))
                    .findFirst()
                    .orElse(null);
        }
    }

    List<Op> serverErrors() {
        return ops.stream().filter(Op::isServerError).toList();
    }

    List<Op> undocumented() {
        return serverErrors().stream().filter(op -> documented(op) == null).toList();
    }

    /** 4xx answers a correct run never gets (a read of a deleted note answering 404 is expected); violations aside. */
    List<Op> unexpectedClientErrors() {
        return ops.stream()
                .filter(op -> op.status() >= 400 && op.status() < 500 && op.status() != op.expected())
                .filter(op -> violations.stream().noneMatch(v -> v.op() == op))
                .toList();
    }

    /**
     * Requests that failed because no primary connection became free within the pool timeout: the primary pool was
     * exhausted (the cause the run looks for; how long requests took is in the report, not judged).
     */
    List<Op> poolTimeouts() {
        return ops.stream().filter(op -> cause(op).equals("503 pool timeout")).toList();
    }

    /** Whether the request got the answer a correct run gives: a 2xx, or the expected status (404 for a deleted note). */
    private static boolean answered(Op op) {
        return op.status() >= 200 && op.status() < 300 || op.expected() != 0 && op.status() == op.expected();
    }

    /**
     * The clients that did no real work: none of their mutations acknowledged, or none of their reads answered. Each
     * client sends requests for the whole run, so on any machine each does both, unless something is really wrong.
     */
    List<String> clientsWithoutCompletedWork() {
        final List<String> idle = new ArrayList<>();
        for (Client client : clients) {
            final List<Op> own =
                    ops.stream().filter(op -> op.client() == client.index).toList();
            final long writes =
                    own.stream().filter(op -> !op.isRead() && answered(op)).count();
            final long reads =
                    own.stream().filter(op -> op.isRead() && answered(op)).count();
            if (writes == 0 || reads == 0) {
                idle.add("client " + client.index + ": " + own.size() + " requests, " + writes
                        + " acknowledged mutations, " + reads + " answered reads");
            }
        }
        return idle;
    }

    /** The phases between faults in which no read that started was answered: a fault that no load saw. */
    List<String> phasesWithoutAnsweredReads() {
        final List<String> empty = new ArrayList<>();
        phases().forEach((name, range) -> {
            if (ops.stream()
                    .noneMatch(op -> op.isRead()
                            && answered(op)
                            && op.startMillis() >= range[0]
                            && op.startMillis() < range[1])) {
                empty.add(name + " (" + range[0] + "–" + Math.min(range[1], runMillis) + " ms)");
            }
        });
        return empty;
    }

    // ---------------------------------------------------------------- report

    String markdown() {
        final StringBuilder md = new StringBuilder(
                options.workload() == Workload.FAULTS ? "# Load and fault run\n\n" : "# Mixed load run\n\n");
        if (setupError != null) {
            md.append("## Setup or run error\n\n```\n").append(setupError).append("\n```\n\n");
        }
        md.append(table()).append('\n');
        if (options.workload() == Workload.FAULTS) {
            appendFaultsAndPhases(md);
        }
        md.append(requestsByKind());
        md.append(meters.markdown());
        md.append("\n## 5xx by cause\n\n| cause | documented as | count |\n|---|---|---:|\n");
        final Map<String, Long> causes = serverErrors().stream()
                .collect(Collectors.groupingBy(
                        op -> cause(op) + " | " + (documented(op) == null ? "**not documented**" : documented(op)),
                        TreeMap::new,
                        Collectors.counting()));
        causes.forEach((cause, count) ->
                md.append("| ").append(cause).append(" | ").append(count).append(" |\n"));
        appendOps(md, "Undocumented 5xx (first 25, with the sample's log lines of the request)", undocumented(), 25);
        appendOps(md, "Unexpected 4xx (first 25)", unexpectedClientErrors(), 25);
        md.append("\n## Read-your-writes violations (first 25)\n\n");
        violations.stream()
                .limit(25)
                .forEach(v -> md.append("- ")
                        .append(describe(v.op()))
                        .append(": note ")
                        .append(v.noteId())
                        .append(" expected `")
                        .append(v.expected())
                        .append("`, got `")
                        .append(v.got())
                        .append("`\n"));
        md.append("\n## Lost writes (first 25)\n\n");
        lost.stream()
                .limit(25)
                .forEach(l -> md.append("- client ")
                        .append(l.client())
                        .append(", note ")
                        .append(l.noteId())
                        .append(": expected `")
                        .append(l.expected())
                        .append("`, the primary has `")
                        .append(l.found())
                        .append("`\n"));
        md.append("\n## Setup\n\n");
        servers.forEach(
                (k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("- primary pool maximum reported by /status: ")
                .append(primaryPoolMaximum)
                .append('\n');
        md.append("- replica1 pool maximum reported by /status: ")
                .append(replica1PoolMaximum)
                .append('\n');
        md.append("- mutations acknowledged again after the Redis restart: ")
                .append(mutationsBack)
                .append('\n');
        md.append("- seed: ").append(options.seed()).append('\n');
        return md.toString();
    }

    private void appendFaultsAndPhases(StringBuilder md) {
        md.append("## Faults (ms after the start)\n\n| at | done | fault |\n|---:|---:|---|\n");
        synchronized (faults) {
            faults.forEach(f -> md.append("| ")
                    .append(f.atMillis())
                    .append(" | ")
                    .append(f.doneMillis())
                    .append(" | ")
                    .append(f.what())
                    .append(" |\n"));
        }
        md.append("\n## Phases (by the start of each request)\n\n")
                .append("| phase | from–to s | requests | p50 ms | p99 ms | max ms | 5xx | reads on replicas |\n")
                .append("|---|---|---:|---:|---:|---:|---:|---:|\n");
        phases().forEach((name, range) -> {
            final List<Op> in = ops.stream()
                    .filter(op -> op.startMillis() >= range[0] && op.startMillis() < range[1])
                    .toList();
            md.append("| ")
                    .append(name)
                    .append(" | ")
                    .append(range[0] / 1000)
                    .append("–")
                    .append(Math.min(range[1], runMillis) / 1000)
                    .append(" | ")
                    .append(in.size())
                    .append(" | ")
                    .append(percentile(in, 50))
                    .append(" | ")
                    .append(percentile(in, 99))
                    .append(" | ")
                    .append(percentile(in, 100))
                    .append(" | ")
                    .append(in.stream().filter(Op::isServerError).count())
                    .append(" | ")
                    .append(offload(in))
                    .append(" |\n");
        });
        final Fault restarted = fault("Redis restarted");
        if (restarted != null) {
            md.append("\nThe last mutation refused for the Redis marker ended ")
                    .append(ops.stream()
                                    .filter(op -> cause(op).startsWith("503 Redis marker"))
                                    .mapToLong(Op::endMillis)
                                    .max()
                                    .orElse(restarted.doneMillis())
                            - restarted.doneMillis())
                    .append(" ms after Redis answered PING again.\n");
        }
    }

    /**
     * Per request kind: latency, 5xx, which node served it ({@code X-Served-By}) and the share of its answered reads
     * served by replicas.
     */
    String requestsByKind() {
        final StringBuilder md = new StringBuilder("\n## Requests by kind\n\n")
                .append(
                        "| kind | requests | p50 ms | p99 ms | max ms | 5xx | served by replica1 / replica2 / primary | on replicas |\n")
                .append("|---|---:|---:|---:|---:|---:|---|---:|\n");
        final Map<String, List<Op>> byKind =
                ops.stream().collect(Collectors.groupingBy(Op::kind, TreeMap::new, Collectors.toList()));
        byKind.forEach((kind, list) -> md.append("| ")
                .append(kind)
                .append(" | ")
                .append(list.size())
                .append(" | ")
                .append(percentile(list, 50))
                .append(" | ")
                .append(percentile(list, 99))
                .append(" | ")
                .append(percentile(list, 100))
                .append(" | ")
                .append(list.stream().filter(Op::isServerError).count())
                .append(" | ")
                .append(served(list, "replica1"))
                .append(" / ")
                .append(served(list, "replica2"))
                .append(" / ")
                .append(served(list, "primary"))
                .append(" | ")
                .append(offload(list))
                .append(" |\n"));
        return md.toString();
    }

    /** Phases between faults, by name: [from, to) in milliseconds since the start. */
    private Map<String, long[]> phases() {
        final Map<String, long[]> phases = new LinkedHashMap<>();
        final List<Fault> sorted;
        synchronized (faults) {
            sorted = faults.stream()
                    .sorted(Comparator.comparingLong(Fault::atMillis))
                    .toList();
        }
        long from = 0;
        String name = "before the faults";
        for (Fault f : sorted) {
            phases.put(name, new long[] {from, f.atMillis()});
            from = f.atMillis();
            name = "after: " + f.what();
        }
        phases.put(name, new long[] {from, Long.MAX_VALUE});
        return phases;
    }

    /** Reads answered 200 by a replica, of those with {@code X-Served-By} (the account read is on the primary by design). */
    private static String offload(List<Op> ops) {
        final List<Op> reads = ops.stream()
                .filter(op -> op.isRead() && op.status() == 200 && op.servedBy() != null)
                .filter(op -> !op.kind().startsWith("account"))
                .toList();
        final long onReplicas =
                reads.stream().filter(op -> op.servedBy().startsWith("replica")).count();
        return reads.isEmpty()
                ? "-"
                : String.format(
                        Locale.ROOT, "%d of %d (%.1f %%)", onReplicas, reads.size(), 100.0 * onReplicas / reads.size());
    }

    /** Every request, one line each, for a closer look. */
    String csv() {
        final StringBuilder csv = new StringBuilder(
                "client,kind,method,path,instance,requestId,startMs,endMs,micros,status,expected,servedBy,error\n");
        ops.stream()
                .sorted(Comparator.comparingLong(Op::startMillis))
                .forEach(op -> csv.append(op.client())
                        .append(',')
                        .append(op.kind())
                        .append(',')
                        .append(op.method())
                        .append(',')
                        .append(op.path().replace(',', ';'))
                        .append(',')
                        .append(op.instance())
                        .append(',')
                        .append(op.requestId())
                        .append(',')
                        .append(op.startMillis())
                        .append(',')
                        .append(op.endMillis())
                        .append(',')
                        .append(op.nanos() / 1000)
                        .append(',')
                        .append(op.status())
                        .append(',')
                        .append(op.expected())
                        .append(',')
                        .append(op.servedBy() == null ? "" : op.servedBy())
                        .append(',')
                        .append(op.error() == null ? "" : '"' + op.error().replace("\"", "'") + '"')
                        .append('\n'));
        return csv.toString();
    }

    /** The summary table of docs/verification.md. */
    String table() {
        final List<Op> all = new ArrayList<>(ops);
        final List<Op> fiveXx = serverErrors();
        final long documented =
                fiveXx.stream().filter(op -> documented(op) != null).count();
        final String byCause = fiveXx.stream()
                .collect(Collectors.groupingBy(LoadFaultRun::cause, TreeMap::new, Collectors.counting()))
                .entrySet()
                .stream()
                .map(e -> e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining("; "));
        final StringBuilder t = new StringBuilder();
        t.append("| figure | value |\n|---|---:|\n");
        row(t, "clients (actors), instances", options.clients() + " (" + actors() + " actors), 2 (A, B)");
        row(
                t,
                "primary pool per instance, pool timeout",
                options.primaryPool() + " (/status: " + primaryPoolMaximum.values() + "), "
                        + options.poolTimeout().toMillis() + " ms");
        row(t, "duration", runMillis / 1000 + " s");
        row(
                t,
                "requests (writes: create / update / delete)",
                all.size() + " (" + count(all, "create") + " / " + count(all, "update") + " / " + count(all, "delete")
                        + ")");
        row(
                t,
                "throughput",
                runMillis == 0 ? "-" : String.format(Locale.ROOT, "%.0f req/s", all.size() * 1000.0 / runMillis));
        row(
                t,
                "latency p50 / p99 / max",
                percentile(all, 50) + " / " + percentile(all, 99) + " / " + percentile(all, 100) + " ms");
        row(
                t,
                "requests slower than the pool timeout (reported, not judged)",
                Long.toString(all.stream()
                        .filter(op -> op.nanos() > options.poolTimeout().toNanos())
                        .count()));
        row(
                t,
                "**requests failed with the pool timeout**",
                "**" + poolTimeouts().size() + "**");
        row(t, "5xx (and no answer)", fiveXx.size() + (byCause.isEmpty() ? "" : " (" + byCause + ")"));
        row(t, "5xx outside the documented cases", Long.toString(fiveXx.size() - documented));
        row(t, "unexpected 4xx", Integer.toString(unexpectedClientErrors().size()));
        row(
                t,
                "acknowledged writes, notes checked on the primary",
                acknowledgedWrites + " notes written, " + notesChecked + " checked");
        row(t, "**lost writes**", "**" + lost.size() + "**");
        row(t, "**read-your-writes violations**", "**" + violations.size() + "**");
        row(t, "reads served by replicas (offload)", offload(all));
        row(
                t,
                "writes that failed but committed (unknown outcome)",
                Integer.toString(unacknowledgedWritesThatCommitted));
        return t.toString();
    }

    /** The number of actors: each {@code clientsPerActor} clients share one. */
    private int actors() {
        return (options.clients() + options.clientsPerActor() - 1) / options.clientsPerActor();
    }

    private static void row(StringBuilder t, String name, String value) {
        t.append("| ").append(name).append(" | ").append(value).append(" |\n");
    }

    private static long count(List<Op> ops, String kind) {
        return ops.stream().filter(op -> op.kind().equals(kind)).count();
    }

    private static long served(List<Op> ops, String node) {
        return ops.stream().filter(op -> node.equals(op.servedBy())).count();
    }

    static long percentile(List<Op> ops, int percent) {
        if (ops.isEmpty()) {
            return 0;
        }
        final long[] sorted = ops.stream().mapToLong(Op::nanos).sorted().toArray();
        final int index = (int) Math.ceil(percent / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))] / 1_000_000;
    }

    private void appendOps(StringBuilder md, String title, List<Op> list, int limit) {
        md.append("\n## ").append(title).append("\n\n");
        for (Op op : list.stream().limit(limit).toList()) {
            md.append("- ").append(describe(op)).append('\n');
            for (String line : logLines(op)) {
                md.append("  - `").append(line.replace('`', '\'')).append("`\n");
            }
        }
    }

    private static String describe(Op op) {
        return op.startMillis() + "–" + op.endMillis() + " ms, client " + op.client() + ", " + op.kind() + ": "
                + op.method() + " /" + op.path() + " via " + op.instance() + " → " + op.status()
                + (op.servedBy() == null ? "" : " (" + op.servedBy() + ")") + ", request id " + op.requestId()
                + (op.error() == null ? "" : ": " + op.error());
    }

    /** The sample process's log lines of a request (its id is in every line it logs), at most 4. */
    private List<String> logLines(Op op) {
        final Path log = logDir.resolve("sample-process-" + op.instance() + ".log");
        if (!Files.exists(log)) {
            return List.of();
        }
        try (Stream<String> lines = Files.lines(log, StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.contains("[" + op.requestId() + "]"))
                    .map(l -> l.length() > 400 ? l.substring(0, 400) + "…" : l)
                    .limit(4)
                    .toList();
        } catch (IOException | java.io.UncheckedIOException e) {
            return List.of("(log unreadable: " + e + ")");
        }
    }

    // ---------------------------------------------------------------- teardown and helpers

    private void tearDown() {
        for (SampleProcess p : new SampleProcess[] {a, b}) {
            if (p != null) {
                p.close();
            }
        }
        if (cluster != null) {
            for (Node node : cluster.nodes()) {
                copy(node.logFile(), "postgres-" + node.name() + ".log");
            }
        }
        if (redis != null) {
            copy(redis.logFile(), "redis.log");
            redis.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private void copy(Path from, String name) {
        try {
            if (from != null && Files.exists(from)) {
                Files.copy(from, logDir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            // The report says which logs exist.
        }
    }

    private HttpResponse<String> send(URI base, String method, String path, String key, String json, String requestId)
            throws IOException, InterruptedException {
        final HttpRequest.Builder request =
                HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30));
        request.header("Authorization", "Bearer " + key).header("X-Request-Id", requestId);
        if (json != null) {
            request.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(json));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(URI uri, String key) throws IOException, InterruptedException {
        final HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return http.send(request.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static boolean onReplica(HttpResponse<String> response) {
        return response.statusCode() == 200
                && response.headers().firstValue("X-Served-By").orElse("").startsWith("replica");
    }

    private static long id(String body) {
        final Matcher m = ID.matcher(body);
        if (!m.find()) {
            throw new IllegalStateException("no id in " + body);
        }
        return Long.parseLong(m.group(1));
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
