package io.github.hibernaterouting.it.suite;

import io.github.hibernaterouting.testkit.Binaries;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The replica suite: one PostgreSQL primary, two streaming standbys and Redis (the test kit), the
 * sample application in two JVM processes (A and B) on them, and checks over HTTP with the sample's
 * real authentication. {@link #run} always writes a report, also when the setup fails.
 */
final class ReplicaSuite {
    /**
     * @param reportDir where report.json, report.md and logs/ go (emptied first)
     * @param binaries PostgreSQL binaries, or {@code null} for the test kit's default
     * @param samplePrimaryUrl the primary URL given to the sample processes, or {@code null} for the cluster's
     */
    record Options(Path reportDir, Binaries binaries, String samplePrimaryUrl) {}

    /** The seeded users (db/schema.sql of the sample). */
    static final String ALICE = "demo-alice";

    static final String BOB = "demo-bob";
    static final String READONLY = "demo-readonly";
    static final long READONLY_ID = 3;
    static final String MARKER_PREFIX = "hibernate-routing:replication:";

    private static final Duration PROCESS_START = Duration.ofSeconds(150);
    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*(\\d+)");
    private static final Pattern TITLE = Pattern.compile("\"title\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern WORDS = Pattern.compile("\"words\"\\s*:\\s*(\\d+)");
    private static final Pattern WORDS_FROM = Pattern.compile("\"wordsReadFrom\"\\s*:\\s*\"([^\"]*)\"");

    private final Options options;
    private final SuiteReport report = new SuiteReport();
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final Path projectRoot = Path.of(System.getProperty("replica.projectRoot", ".."))
            .toAbsolutePath()
            .normalize();
    private final Path logDir;

    private PostgresCluster cluster;
    private RedisServer redis;
    private SampleProcess a;
    private SampleProcess b;
    private long bobNote;

    private ReplicaSuite(Options options) {
        this.options = options;
        this.logDir = options.reportDir().resolve("logs");
    }

    /** Runs the suite and writes its report; never throws for a failed setup or check (see the report). */
    static SuiteReport run(Options options) throws IOException {
        return new ReplicaSuite(options).run();
    }

    private SuiteReport run() throws IOException {
        final long start = System.nanoTime();
        deleteTree(options.reportDir());
        Files.createDirectories(logDir);
        try {
            registerChecks();
            describeRun();
            if (setUp()) {
                report.setupMillis = millisSince(start);
                runChecks();
            } else {
                report.setupMillis = millisSince(start);
            }
        } catch (Throwable t) {
            // Anything that escaped the checks' own handling: the report must still say so.
            if (report.setupError == null) {
                report.setupError = "Unexpected failure of the harness: " + SuiteReport.stackTrace(t, 20);
                report.setupPhase = "harness";
            }
        } finally {
            tearDown();
            report.totalMillis = millisSince(start);
            report.write(options.reportDir());
        }
        return report;
    }

    // ---------------------------------------------------------------- description

    private void describeRun() {
        report.environment.put(
                "java", System.getProperty("java.version") + " (" + System.getProperty("java.home") + ")");
        report.environment.put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        report.environment.put(
                "processors", Integer.toString(Runtime.getRuntime().availableProcessors()));
        report.environment.put("projectRoot", projectRoot.toString());
        gitRevision();
        for (String module : List.of("hibernate-routing", "jakarta-ee-sample")) {
            final Path dir = projectRoot.resolve(module).resolve("src/main");
            try {
                report.fingerprints.put(module + "/src/main", fingerprint(dir));
            } catch (Exception e) {
                report.fingerprints.put(module + "/src/main", "unavailable: " + e);
            }
        }
    }

    private void gitRevision() {
        try {
            final String head = git("rev-parse", "HEAD");
            report.revision.put("commit", head.trim());
            // --no-optional-locks: status must not refresh (write) the index.
            final String status = git("--no-optional-locks", "status", "--porcelain", "--untracked-files=normal");
            final long changed = status.lines().filter(l -> !l.isBlank()).count();
            report.revision.put("dirty", Boolean.toString(changed > 0));
            report.revision.put("changedPaths", Long.toString(changed));
            if (changed > 0) {
                report.revision.put("changes", status.lines().limit(40).collect(Collectors.joining("; ")));
            }
        } catch (Exception e) {
            report.revision.put("commit", "unknown");
            report.revision.put("dirty", "unknown");
            report.revision.put("gitError", "git is missing or failed: " + e.getMessage());
        }
    }

    private String git(String... args) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>();
        command.add("git");
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command)
                .directory(projectRoot.toFile())
                .redirectErrorStream(true)
                .start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException("git " + String.join(" ", args) + " timed out");
        }
        if (process.exitValue() != 0) {
            throw new IOException(
                    "git " + String.join(" ", args) + " exited with " + process.exitValue() + ": " + out.trim());
        }
        return out;
    }

    /**
     * SHA-256 over the sorted relative paths ('/'-separated) and contents of every file under {@code dir}:
     * for each file, its path, a NUL, its size in decimal, a NUL, its bytes.
     */
    static String fingerprint(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            throw new IOException(dir + " is not a directory");
        }
        final List<Path> files;
        try (Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        final List<String> relative = files.stream()
                .map(f -> dir.relativize(f).toString().replace('\\', '/'))
                .sorted()
                .toList();
        final MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (String path : relative) {
            final byte[] content = Files.readAllBytes(dir.resolve(path));
            sha.update(path.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(Long.toString(content.length).getBytes(StandardCharsets.US_ASCII));
            sha.update((byte) 0);
            sha.update(content);
        }
        return "sha256:" + HexFormat.of().formatHex(sha.digest()) + " (" + relative.size() + " files)";
    }

    // ---------------------------------------------------------------- setup and teardown

    /** Starts the servers and the two processes; false (with the error in the report) if any of it fails. */
    private boolean setUp() {
        try {
            report.setupPhase = "PostgreSQL cluster (primary + 2 standbys)";
            PostgresCluster.Builder builder =
                    PostgresCluster.builder().standbys(2).startTimeout(Duration.ofSeconds(120));
            if (options.binaries() != null) {
                builder = builder.binaries(options.binaries());
            }
            cluster = builder.start();
            report.servers.put("primary", cluster.primary().jdbcUrl());
            report.servers.put("replica1", cluster.standby(1).jdbcUrl());
            report.servers.put("replica2", cluster.standby(2).jdbcUrl());

            report.setupPhase = "Redis";
            redis = RedisServer.start();
            report.servers.put("redis", redis.uri());

            report.setupPhase = "server versions";
            report.versions.put("postgresql", queryPrimary("select version()"));
            report.versions.put("redis", redisVersion());

            final String classpath = Files.readString(
                            Path.of(System.getProperty("replica.sampleClasspathFile", "target/sample-classpath.txt")))
                    .trim();
            final Path webapp = Path.of(
                            System.getProperty("replica.sampleWebapp", "../jakarta-ee-sample/src/main/webapp"))
                    .toAbsolutePath()
                    .normalize();
            final Map<String, String> env = new LinkedHashMap<>();
            env.put(
                    "SAMPLE_PRIMARY_URL",
                    options.samplePrimaryUrl() != null
                            ? options.samplePrimaryUrl()
                            : cluster.primary().jdbcUrl());
            env.put(
                    "HIBERNATE_ROUTING_REPLICA_URLS",
                    cluster.standby(1).jdbcUrl() + "," + cluster.standby(2).jdbcUrl());
            env.put("SAMPLE_DB_USER", cluster.user());
            env.put("SAMPLE_DB_PASSWORD", cluster.password());
            env.put("HIBERNATE_ROUTING_REDIS_URI", redis.uri());

            // One after the other: both apply the (idempotent) schema at start, and concurrent
            // "create table if not exists" can collide in PostgreSQL's catalog.
            report.setupPhase = "sample process A";
            long t = System.nanoTime();
            a = SampleProcess.start("A", classpath, webapp, env, logDir.resolve("sample-process-A.log"), PROCESS_START);
            report.servers.put("process A", a.uri() + " (pid " + a.pid() + ", up in " + millisSince(t) + " ms)");
            report.setupPhase = "sample process B";
            t = System.nanoTime();
            b = SampleProcess.start("B", classpath, webapp, env, logDir.resolve("sample-process-B.log"), PROCESS_START);
            report.servers.put("process B", b.uri() + " (pid " + b.pid() + ", up in " + millisSince(t) + " ms)");

            report.setupPhase = "warm-up (reads reach the replicas in both processes)";
            warmUp();
            report.setupPhase = null;
            return true;
        } catch (Throwable e) {
            // The message in full (it may carry a process log's tail), then a short stack trace.
            report.setupError = report.setupPhase + " failed: " + e + "\n\nStack trace (shortened):\n"
                    + SuiteReport.stackTrace(e, 12);
            return false;
        }
    }

    /**
     * Bob writes a seed note; once the standbys have it and the first marker window after the
     * processes met this Redis is over, both processes serve Bob's reads of it from replicas.
     */
    private void warmUp() throws Exception {
        final SuiteReport.Check warm = new SuiteReport.Check("0", "warm-up");
        final Response created = call(
                warm,
                "seed note",
                a,
                "POST",
                "api/notes",
                BOB,
                Map.of(),
                "{\"title\":\"bob seed\",\"body\":\"seed for reads\"}");
        require(created.status == 201, "seed POST answered " + created.status + ": " + created.body);
        bobNote = id(created);
        cluster.awaitCaughtUp(Duration.ofSeconds(60));
        final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        boolean aOnReplica = false;
        boolean bOnReplica = false;
        while (!(aOnReplica && bOnReplica)) {
            require(
                    System.nanoTime() < deadline,
                    () -> "Bob's reads did not reach a replica in both processes within 60 s: " + warm.exchanges + "; "
                            + routingStatus());
            aOnReplica |= isReplica(call(warm, "warm", a, "GET", "api/notes/" + bobNote, BOB, Map.of(), null).servedBy);
            bOnReplica |= isReplica(call(warm, "warm", b, "GET", "api/notes/" + bobNote, BOB, Map.of(), null).servedBy);
            Thread.sleep(250); // poll interval
        }
    }

    private void tearDown() {
        for (SampleProcess process : new SampleProcess[] {a, b}) {
            if (process != null) {
                try {
                    process.close();
                } catch (RuntimeException e) {
                    report.teardownProblems.add("stopping process " + process.name + ": " + e);
                }
            }
        }
        if (cluster != null) {
            try {
                cluster.resumeAll();
            } catch (RuntimeException e) {
                report.teardownProblems.add("resuming replay: " + e);
            }
            for (Node node : cluster.nodes()) {
                copyLog(node.logFile(), "postgres-" + node.name() + ".log");
            }
        }
        if (redis != null) {
            copyLog(redis.logFile(), "redis.log");
            try {
                redis.close();
            } catch (RuntimeException e) {
                report.teardownProblems.add("closing Redis: " + e);
            }
        }
        if (cluster != null) {
            try {
                cluster.close();
            } catch (RuntimeException e) {
                report.teardownProblems.add("closing the cluster: " + e);
            }
        }
        try (Stream<Path> logs = Files.list(logDir)) {
            logs.sorted()
                    .forEach(
                            log -> report.logs.add(options.reportDir().relativize(log) + " (" + size(log) + " bytes)"));
        } catch (IOException e) {
            report.teardownProblems.add("listing the logs: " + e);
        }
    }

    private void copyLog(Path from, String name) {
        try {
            if (from != null && Files.exists(from)) {
                Files.copy(from, logDir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
            } else {
                report.teardownProblems.add("log " + from + " does not exist");
            }
        } catch (IOException e) {
            report.teardownProblems.add("copying " + from + ": " + e);
        }
    }

    // ---------------------------------------------------------------- checks

    @FunctionalInterface
    interface CheckBody {
        void run(SuiteReport.Check check) throws Exception;
    }

    private void check(SuiteReport.Check check, CheckBody body) {
        final long start = System.nanoTime();
        check.ran = true;
        try {
            body.run(check);
            check.passed = true;
        } catch (AssertionError e) {
            check.failure = e.getMessage();
        } catch (Throwable e) {
            check.failure = "Error: " + SuiteReport.stackTrace(e, 12);
        } finally {
            check.millis = millisSince(start);
        }
    }

    /** Every check, in the order they run; listed (NOT_RUN) in the report even when the setup fails. */
    private void registerChecks() {
        report.check("1", "Read-your-writes across processes while replica1's replay is paused");
        report.check("3", "Caller isolation: another key's reads are unaffected");
        report.check("6a", "Transaction (PATCH via A) then read via B");
        report.check("6b", "Native SQL write via A, native read via B");
        report.check("6c", "Worker reads a stamped message (note via A, count read via B)");
        report.check("2", "After the window and catch-up, the key's reads go back to replicas");
        report.check("5", "Primary overrides: X-Force-Primary, Consistency: strong, @RoutingStrategy; bad values 400");
        report.check("6d", "Access denial: 401 without a key, 403 for a read-only write, never routed or stamped");
        report.check("4", "Redis failure: reads on the primary, mutations 503 before the handler; recovery");
    }

    private void runChecks() throws Exception {
        final SuiteReport.Check ryw = report.checks.get(0);
        final SuiteReport.Check isolation = report.checks.get(1);
        final SuiteReport.Check tx = report.checks.get(2);
        final SuiteReport.Check raw = report.checks.get(3);
        final SuiteReport.Check worker = report.checks.get(4);
        final SuiteReport.Check back = report.checks.get(5);
        final SuiteReport.Check overrides = report.checks.get(6);
        final SuiteReport.Check denial = report.checks.get(7);
        final SuiteReport.Check redisDown = report.checks.get(8);

        // A note of Alice's for the transaction and native-SQL checks, replicated before the pause.
        final SuiteReport.Check prep = new SuiteReport.Check("prep", "prep");
        final long aliceNote = id(expect(
                call(
                        prep,
                        "prep",
                        a,
                        "POST",
                        "api/notes",
                        ALICE,
                        Map.of(),
                        "{\"title\":\"alice base\",\"body\":\"before the pause\"}"),
                201));
        // A fresh commit replayed everywhere right before the pause: the library measures a lagging
        // replica's lag from its last replayed commit, and replica1 must stay within max_replica_lag
        // (10 s) for the isolation check, which expects Bob's reads on it.
        execOnPrimary("create table if not exists replica_suite_heartbeat (at timestamptz not null)");
        execOnPrimary("insert into replica_suite_heartbeat values (now())");
        cluster.awaitCaughtUp(Duration.ofSeconds(60));

        final Node replica1 = cluster.standby(1);
        cluster.pauseReplay(replica1);
        try {
            // 3 first, while replica1's lag is young: Alice writes, then Bob reads through A and B.
            check(isolation, c -> {
                final Response trigger = expect(
                        call(
                                c,
                                "Alice writes (trigger)",
                                a,
                                "POST",
                                "api/notes",
                                ALICE,
                                Map.of(),
                                "{\"title\":\"isolation trigger\",\"body\":\"alice writes\"}"),
                        201);
                require("primary".equals(trigger.servedBy), "Alice's POST served by " + trigger.servedBy);
                final Set<String> nodes = new LinkedHashSet<>();
                for (int i = 0; i < 8; i++) {
                    final int index = i;
                    final SampleProcess p = i % 2 == 0 ? a : b;
                    final Response read = expect(
                            call(c, "Bob reads " + i, p, "GET", "api/notes/" + bobNote, BOB, Map.of(), null), 200);
                    require(
                            isReplica(read.servedBy),
                            () -> "Bob's read " + index + " via " + p.name + " served by " + read.servedBy
                                    + " (Alice's write must not move Bob to the primary); " + routingStatus());
                    nodes.add(read.servedBy);
                }
                // replica1 stays eligible for Bob while its lag (from the heartbeat above) is within max_replica_lag.
                require(
                        nodes.contains("replica1") && nodes.contains("replica2"),
                        () -> "Bob's reads should use both replicas, including paused replica1; saw " + nodes + "; "
                                + routingStatus());
                c.note("Bob's reads were served by " + nodes + " while replica1 lacked Alice's write");
            });

            check(ryw, c -> {
                final Map<String, Integer> byNode = new LinkedHashMap<>();
                for (int i = 0; i < 10; i++) {
                    final String title = "ryw " + i + " " + UUID.randomUUID();
                    final Response created = expect(
                            call(
                                    c,
                                    "POST " + i,
                                    a,
                                    "POST",
                                    "api/notes",
                                    ALICE,
                                    Map.of(),
                                    "{\"title\":\"" + title + "\",\"body\":\"written through A\"}"),
                            201);
                    require(
                            created.headers
                                    .firstValue("X-Consistency-Token")
                                    .orElse("")
                                    .startsWith("rl1."),
                            "POST " + i + " has no X-Consistency-Token");
                    final long id = id(created);
                    final Response read =
                            expect(call(c, "GET " + i, b, "GET", "api/notes/" + id, ALICE, Map.of(), null), 200);
                    require(title.equals(title(read)), "read " + i + " through B returned " + read.body);
                    require(!"replica1".equals(read.servedBy), "read " + i + " was served by the paused replica1");
                    byNode.merge(read.servedBy, 1, Integer::sum);
                }
                require(cluster.isReplayPaused(replica1), "replica1's replay was no longer paused");
                c.note("10 POSTs through A, each read at once through B: served by " + byNode);
            });

            check(tx, c -> {
                final String title = "patched " + UUID.randomUUID();
                final Response patched = expect(
                        call(
                                c,
                                "PATCH",
                                a,
                                "PATCH",
                                "api/notes/" + aliceNote,
                                ALICE,
                                Map.of(),
                                "{\"title\":\"" + title + "\"}"),
                        200);
                require("primary".equals(patched.servedBy), "PATCH served by " + patched.servedBy);
                final Response read =
                        expect(call(c, "GET", b, "GET", "api/notes/" + aliceNote, ALICE, Map.of(), null), 200);
                require(title.equals(title(read)), "GET through B after the PATCH returned " + read.body);
                require(!"replica1".equals(read.servedBy), "served by the paused replica1");
                c.note("PATCH (a transaction: select, then versioned update) on " + patched.servedBy
                        + "; the read through B on " + read.servedBy);
            });

            check(raw, c -> {
                final String title = "raw " + UUID.randomUUID();
                final Response put = expect(
                        call(
                                c,
                                "native update",
                                a,
                                "PUT",
                                "api/raw/notes/" + aliceNote,
                                ALICE,
                                Map.of(),
                                "{\"title\":\"" + title + "\"}"),
                        200);
                require("primary".equals(put.servedBy), "native update's EntityManager on " + put.servedBy);
                final Response read = expect(
                        call(c, "native select", b, "GET", "api/raw/notes/" + aliceNote, ALICE, Map.of(), null), 200);
                require(title.equals(title(read)), "native read through B returned " + read.body);
                require(!"replica1".equals(read.servedBy), "native read served by the paused replica1");
                final Set<String> bobNodes = new LinkedHashSet<>();
                for (int i = 0; i < 4; i++) {
                    final Response bob = expect(
                            call(
                                    c,
                                    "Bob native select " + i,
                                    i % 2 == 0 ? a : b,
                                    "GET",
                                    "api/raw/notes/" + bobNote,
                                    BOB,
                                    Map.of(),
                                    null),
                            200);
                    require(isReplica(bob.servedBy), "Bob's native read served by " + bob.servedBy);
                    bobNodes.add(bob.servedBy);
                }
                c.note("Native update on the primary; Alice's native read through B on " + read.servedBy
                        + "; Bob's native reads on " + bobNodes + " (native selects do go to replicas)");
            });

            check(worker, c -> {
                // The worker counts the words of the title and the body: 2 + 7.
                final String title = "worker " + UUID.randomUUID();
                final String body = "one two three four five six seven";
                final int expected = (title + " " + body).split("\\s+").length;
                final Response created = expect(
                        call(
                                c,
                                "POST",
                                a,
                                "POST",
                                "api/notes",
                                ALICE,
                                Map.of(),
                                "{\"title\":\"" + title + "\",\"body\":\"" + body + "\"}"),
                        201);
                final long id = id(created);
                final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                Response read;
                while (true) {
                    read = expect(call(c, "GET (poll)", b, "GET", "api/notes/" + id, ALICE, Map.of(), null), 200);
                    if (WORDS.matcher(read.body).find()) {
                        break;
                    }
                    require(System.nanoTime() < deadline, "no word count after 60 s: " + read.body);
                    Thread.sleep(300); // poll interval
                }
                final Matcher words = WORDS.matcher(read.body);
                words.find();
                require(
                        Integer.parseInt(words.group(1)) == expected,
                        "word count " + words.group(1) + ", expected " + expected + ": " + read.body);
                final Matcher from = WORDS_FROM.matcher(read.body);
                require(from.find(), "no wordsReadFrom: " + read.body);
                require(!"replica1".equals(from.group(1)), "the worker read the note from the paused replica1");
                c.note("Worker in process A counted " + expected + " words (title and body), reading the note from "
                        + from.group(1) + "; the count was read through B (served by " + read.servedBy + ")");
            });
        } finally {
            cluster.resumeReplay(replica1);
        }

        check(back, c -> {
            final long start = System.nanoTime();
            cluster.awaitCaughtUp(Duration.ofSeconds(60));
            c.note("replica1 resumed; both standbys caught up after " + millisSince(start) + " ms");
            // The marker window: Alice's Redis marker (TTL = hibernate.routing.redis.window, 10 s) expires.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (redisExists(MARKER_PREFIX + "1")) {
                require(System.nanoTime() < deadline, "Alice's marker " + MARKER_PREFIX + "1 still exists after 30 s");
                Thread.sleep(200); // poll interval
            }
            c.note("Alice's marker " + MARKER_PREFIX + "1 expired after " + millisSince(start) + " ms");
            final long polling = System.nanoTime();
            final Set<String> nodes = pollUntilBothReplicas(c, ALICE, "api/notes/" + aliceNote, Duration.ofSeconds(60));
            c.note("Alice's reads through A and B then reached " + nodes + " within " + millisSince(polling) + " ms");
        });

        check(overrides, c -> {
            final String path = "api/notes/" + bobNote;
            final Response plain = expect(call(c, "no header (control)", b, "GET", path, BOB, Map.of(), null), 200);
            require(isReplica(plain.servedBy), "control read without headers served by " + plain.servedBy);
            for (SampleProcess p : List.of(a, b)) {
                require(
                        "primary"
                                .equals(expect(
                                                call(
                                                        c,
                                                        "X-Force-Primary: true",
                                                        p,
                                                        "GET",
                                                        path,
                                                        BOB,
                                                        Map.of("X-Force-Primary", "true"),
                                                        null),
                                                200)
                                        .servedBy),
                        "X-Force-Primary: true not on the primary");
                require(
                        "primary"
                                .equals(expect(
                                                call(
                                                        c,
                                                        "Consistency: strong",
                                                        p,
                                                        "GET",
                                                        path,
                                                        BOB,
                                                        Map.of("Consistency", "strong"),
                                                        null),
                                                200)
                                        .servedBy),
                        "Consistency: strong not on the primary");
                require(
                        "primary"
                                .equals(expect(
                                                call(
                                                        c,
                                                        "@RoutingStrategy(PRIMARY)",
                                                        p,
                                                        "GET",
                                                        "api/me",
                                                        BOB,
                                                        Map.of(),
                                                        null),
                                                200)
                                        .servedBy),
                        "/api/me not on the primary");
            }
            expect(call(c, "X-Force-Primary: yes", a, "GET", path, BOB, Map.of("X-Force-Primary", "yes"), null), 400);
            expect(call(c, "Consistency: eventual", b, "GET", path, BOB, Map.of("Consistency", "eventual"), null), 400);
            expect(
                    call(
                            c,
                            "X-Consistency-Token: not-a-token",
                            a,
                            "GET",
                            path,
                            BOB,
                            Map.of("X-Consistency-Token", "not-a-token"),
                            null),
                    400);
            c.note("Control read on " + plain.servedBy
                    + "; every override on the primary in both processes; invalid values 400");
        });

        check(denial, c -> {
            // Control: Alice's write leaves a marker, so the probe below can see one.
            expect(
                    call(
                            c,
                            "Alice writes (control)",
                            a,
                            "POST",
                            "api/notes",
                            ALICE,
                            Map.of(),
                            "{\"title\":\"marker control\",\"body\":\"x\"}"),
                    201);
            require(
                    redisExists(MARKER_PREFIX + "1"),
                    "no Redis marker for Alice right after her write: the probe is wrong");
            final String lsnBefore = queryPrimary(
                    "select coalesce(read_after_write_lsn::text, 'null') from users where id = " + READONLY_ID);
            final String notesBefore = queryPrimary("select count(*) from notes where owner_id = " + READONLY_ID);
            final String json = "{\"title\":\"denied\",\"body\":\"read-only keys cannot write\"}";
            expect(call(c, "no Authorization", a, "GET", "api/notes", null, Map.of(), null), 401);
            expect(call(c, "no Authorization", b, "POST", "api/notes", null, Map.of(), json), 401);
            expect(call(c, "unknown key", b, "GET", "api/notes/" + bobNote, "no-such-key", Map.of(), null), 401);
            final Response denied =
                    expect(call(c, "read-only POST", a, "POST", "api/notes", READONLY, Map.of(), json), 403);
            require(denied.headers.firstValue("X-Consistency-Token").isEmpty(), "403 carries a consistency token");
            expect(
                    call(
                            c,
                            "read-only PATCH",
                            b,
                            "PATCH",
                            "api/notes/" + bobNote,
                            READONLY,
                            Map.of(),
                            "{\"title\":\"x\"}"),
                    403);
            expect(call(c, "read-only DELETE", a, "DELETE", "api/notes/" + bobNote, READONLY, Map.of(), null), 403);
            expect(call(c, "read-only GET (allowed)", b, "GET", "api/notes", READONLY, Map.of(), null), 200);
            final String lsnAfter = queryPrimary(
                    "select coalesce(read_after_write_lsn::text, 'null') from users where id = " + READONLY_ID);
            require(
                    lsnBefore.equals(lsnAfter),
                    "demo-readonly's read_after_write_lsn changed: " + lsnBefore + " -> " + lsnAfter);
            require(
                    notesBefore.equals(queryPrimary("select count(*) from notes where owner_id = " + READONLY_ID)),
                    "demo-readonly's notes changed");
            require(!redisExists(MARKER_PREFIX + READONLY_ID), "Redis has a marker for demo-readonly");
            require(
                    queryPrimary("select count(*) from notes where id = " + bobNote)
                            .equals("1"),
                    "Bob's note was deleted");
            c.note("users.read_after_write_lsn of demo-readonly stayed " + lsnAfter + "; no Redis key " + MARKER_PREFIX
                    + READONLY_ID + " (Alice's " + MARKER_PREFIX + "1 exists); demo-readonly has " + notesBefore
                    + " notes");
        });

        check(redisDown, c -> {
            redis.stop();
            final long stopped = System.nanoTime();
            for (SampleProcess p : List.of(a, b)) {
                final Response read = expect(
                        call(c, "Alice reads, Redis down", p, "GET", "api/notes/" + aliceNote, ALICE, Map.of(), null),
                        200);
                require(
                        "primary".equals(read.servedBy),
                        "with Redis down, Alice's read via " + p.name + " served by " + read.servedBy);
            }
            final String tag = "redis-down-" + UUID.randomUUID();
            for (SampleProcess p : List.of(a, b)) {
                final Response post = call(
                        c,
                        "POST, Redis down",
                        p,
                        "POST",
                        "api/notes",
                        ALICE,
                        Map.of(),
                        "{\"title\":\"" + tag + "\",\"body\":\"must not be written\"}");
                require(
                        post.status == 503,
                        "POST via " + p.name + " with Redis down answered " + post.status + ": " + post.body);
            }
            require(
                    queryPrimary("select count(*) from notes where title = '" + tag + "'")
                            .equals("0"),
                    "a note of the refused POSTs is on the primary");
            c.note("Redis stopped: reads on the primary, 2 POSTs answered 503 and wrote nothing ("
                    + millisSince(stopped) + " ms)");

            redis.restart();
            final long restarted = System.nanoTime();
            for (SampleProcess p : List.of(a, b)) {
                final long deadline = System.nanoTime() + Duration.ofSeconds(45).toNanos();
                while (true) {
                    final Response post = call(
                            c,
                            "POST after restart",
                            p,
                            "POST",
                            "api/notes",
                            ALICE,
                            Map.of(),
                            "{\"title\":\"after restart\",\"body\":\"x\"}");
                    if (post.status == 201) {
                        break;
                    }
                    require(
                            post.status == 503,
                            "POST via " + p.name + " after the restart answered " + post.status + ": " + post.body);
                    require(
                            System.nanoTime() < deadline,
                            () -> "mutations via " + p.name + " still 503 45 s after the Redis restart: " + post.body
                                    + "; " + routingStatus());
                    Thread.sleep(500); // poll interval
                }
            }
            final long writesBack = millisSince(restarted);
            final Set<String> nodes = pollUntilBothReplicas(c, ALICE, "api/notes/" + aliceNote, Duration.ofSeconds(60));
            c.note("After redis.restart(): mutations 201 again in both processes after " + writesBack
                    + " ms; Alice's reads back on " + nodes + " after " + millisSince(restarted)
                    + " ms (one 10 s marker window on the primary is documented)");
        });
    }

    /** Polls {@code path} through A and B until both replicas have served it (and B's reads are on replicas). */
    private Set<String> pollUntilBothReplicas(SuiteReport.Check c, String key, String path, Duration timeout)
            throws Exception {
        final long deadline = System.nanoTime() + timeout.toNanos();
        final Set<String> nodes = new LinkedHashSet<>();
        while (!(nodes.contains("replica1") && nodes.contains("replica2"))) {
            require(
                    System.nanoTime() < deadline,
                    () -> "reads did not return to both replicas within " + timeout.toSeconds() + " s; saw " + nodes
                            + "; " + routingStatus());
            for (SampleProcess p : List.of(a, b)) {
                final Response read = expect(call(c, "poll", p, "GET", path, key, Map.of(), null), 200);
                if (isReplica(read.servedBy)) {
                    nodes.add(read.servedBy);
                }
            }
            if (!(nodes.contains("replica1") && nodes.contains("replica2"))) {
                Thread.sleep(250); // poll interval
            }
        }
        return nodes;
    }

    // ---------------------------------------------------------------- HTTP

    record Response(int status, String body, HttpHeaders headers, String servedBy) {}

    private Response call(
            SuiteReport.Check check,
            String label,
            SampleProcess process,
            String method,
            String path,
            String key,
            Map<String, String> headers,
            String json)
            throws IOException, InterruptedException {
        final URI uri = process.uri().resolve(path);
        final HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        headers.forEach(request::header);
        if (json != null) {
            request.header("Content-Type", "application/json");
            request.method(method, HttpRequest.BodyPublishers.ofString(json));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        final long start = System.nanoTime();
        final HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        final String servedBy = response.headers().firstValue("X-Served-By").orElse(null);
        check.exchanges.add(new SuiteReport.Exchange(
                label, process.name, method, "/" + path, response.statusCode(), servedBy, millisSince(start)));
        return new Response(response.statusCode(), response.body(), response.headers(), servedBy);
    }

    private static Response expect(Response response, int status) {
        require(
                response.status == status,
                "expected HTTP " + status + ", got " + response.status + ": " + response.body);
        return response;
    }

    private static long id(Response response) {
        final Matcher m = ID.matcher(response.body);
        require(m.find(), "no id in " + response.body);
        return Long.parseLong(m.group(1));
    }

    private static String title(Response response) {
        final Matcher m = TITLE.matcher(response.body);
        return m.find() ? m.group(1) : null;
    }

    private static boolean isReplica(String servedBy) {
        return "replica1".equals(servedBy) || "replica2".equals(servedBy);
    }

    static void require(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }

    /** {@link #require(boolean, String)} with a message made only on failure (one that asks the processes). */
    static void require(boolean condition, Supplier<String> message) {
        if (!condition) {
            throw new AssertionError(message.get());
        }
    }

    /** For failure messages: each process's {@code /status} (each node's health, lag and pool, the latest decisions). */
    private String routingStatus() {
        final StringBuilder text = new StringBuilder();
        for (SampleProcess p : List.of(a, b)) {
            text.append(text.length() == 0 ? "" : "; ").append(p.name).append(" /status: ");
            try {
                final HttpResponse<String> status = http.send(
                        HttpRequest.newBuilder(p.uri().resolve("status"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                text.append(status.body());
            } catch (IOException | RuntimeException e) {
                text.append("unavailable: ").append(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                text.append("interrupted");
            }
        }
        return text.toString();
    }

    // ---------------------------------------------------------------- servers

    private String queryPrimary(String sql) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private void execOnPrimary(String sql) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                PreparedStatement s = c.prepareStatement(sql)) {
            s.execute();
        }
    }

    private String redisVersion() throws IOException {
        final String info = redisCommand("INFO", "server");
        return info.lines()
                .filter(l -> l.startsWith("redis_version:"))
                .map(l -> l.substring("redis_version:".length()).trim())
                .findFirst()
                .orElse("unknown (INFO server: " + info.lines().findFirst().orElse("") + ")");
    }

    private boolean redisExists(String key) throws IOException {
        return redisCommand("EXISTS", key).trim().equals(":1");
    }

    /** One command over RESP on a fresh socket; the reply as text (bulk strings with their content). */
    private String redisCommand(String... args) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(redis.host(), redis.port()), 2000);
            socket.setSoTimeout(5000);
            final StringBuilder command = new StringBuilder("*" + args.length + "\r\n");
            for (String arg : args) {
                command.append('$')
                        .append(arg.getBytes(StandardCharsets.UTF_8).length)
                        .append("\r\n")
                        .append(arg)
                        .append("\r\n");
            }
            final OutputStream out = socket.getOutputStream();
            out.write(command.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            final InputStream in = socket.getInputStream();
            final BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            final String first = reader.readLine();
            if (first == null) {
                throw new IOException("Redis closed the connection");
            }
            if (first.startsWith("$")) {
                final int length = Integer.parseInt(first.substring(1));
                if (length < 0) {
                    return "";
                }
                final char[] buffer = new char[length];
                int read = 0;
                while (read < length) {
                    final int n = reader.read(buffer, read, length - read);
                    if (n < 0) {
                        break;
                    }
                    read += n;
                }
                return new String(buffer, 0, read);
            }
            return first;
        }
    }

    // ---------------------------------------------------------------- files

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return -1;
        }
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
