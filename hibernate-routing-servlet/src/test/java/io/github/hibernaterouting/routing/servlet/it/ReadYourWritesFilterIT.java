package io.github.hibernaterouting.routing.servlet.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.servlet.ReadYourWritesFilter;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The filter in a real web application over HTTP, against a real primary with two streaming
 * standbys and a real Redis. One standby's replay is paused where a read must see a write, so that
 * round-robin would hit it; every read answer names the server port that served it.
 */
@ExtendWith(RoutingLeakCheck.class)
class ReadYourWritesFilterIT {
    @RegisterExtension
    static final PostgresClusterExtension DB =
            PostgresClusterExtension.withStandbys(2).withRedis();

    static PostgresCluster cluster;
    static RedisServer redis;
    static EntityManagerFactory emf;
    static TestApplication app;
    /** The same application with the consistency cookie switched on. */
    static TestApplication cookieApp;

    static HttpClient http;
    static RedisClient redisClient;
    static final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    /** A note every replica has, for reads that only ask who served them. */
    static long oldNote;
    /** The token of the write of {@link #oldNote}: one every replica has replayed. */
    static String oldToken;

    @BeforeAll
    static void start() throws Exception {
        cluster = DB.cluster();
        redis = DB.redis();
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute("drop table if exists web_note");
            s.execute("drop sequence if exists web_note_seq");
            s.execute("create sequence web_note_seq start 1 increment 50");
            s.execute("create table web_note (id bigint primary key, text text)");
        }
        // After Redis starts (or restarts) without data, actors read from the primary for one window:
        // keep it short here.
        // A time bound on lag that no test reaches: a standby whose replay a test paused stays eligible however
        // slow the machine is (its lag counts from its last replayed commit, which may be from an earlier test), so
        // that only read-your-writes keeps a read off it. ("0" would switch the bound off, but then lag data older
        // than 1 s would count as unknown and make the replica ineligible whenever a busy machine delays a health
        // check.)
        emf = RoutingTestSupport.emf(
                "servlet-it",
                cluster,
                Map.of(
                        RoutingSettings.REDIS_URI,
                        redis.uri(),
                        RoutingSettings.REDIS_WINDOW,
                        "1s",
                        RoutingSettings.REDIS_ALLOW_SHORT_WINDOW,
                        "true",
                        RoutingSettings.MAX_REPLICA_LAG,
                        "1h",
                        RoutingSettings.METER_REGISTRY,
                        meters),
                WebNote.class);
        app = new TestApplication(emf, "GET /reports/**=PRIMARY");
        cookieApp = new TestApplication(
                emf, "GET /reports/**=PRIMARY", Map.of(ReadYourWritesFilter.CONSISTENCY_COOKIE_PARAM, COOKIE));
        http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        redisClient = RedisClient.create(redis.uri());
        final HttpResponse<String> setup = post("setup", "an old note");
        oldNote = Long.parseLong(setup.body().trim());
        oldToken = setup.headers().firstValue("X-Consistency-Token").orElseThrow();
    }

    @AfterAll
    static void stop() throws Exception {
        if (redisClient != null) {
            redisClient.shutdown();
        }
        if (app != null) {
            app.close();
        }
        if (cookieApp != null) {
            cookieApp.close();
        }
        if (emf != null) {
            emf.close();
        }
    }

    @BeforeEach
    void replicasCaughtUpAndUp() throws InterruptedException {
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        awaitReplicasUp(emf);
        // ... and Redis's start-up window (see start()) is over: an actor's read uses a replica.
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (actorReadServedByPrimary()) {
            assertThat(System.nanoTime())
                    .as(() -> "actors read from replicas after Redis's start-up window; " + routing())
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** Each node's state and the latest decisions, newest first: for failure messages. */
    private static String routing() {
        final RoutingStatus status = RoutingStatus.of(emf);
        return "nodes " + status.nodes() + ", latest decisions "
                + status.decisions().subList(0, Math.min(10, status.decisions().size()));
    }

    private static boolean actorReadServedByPrimary() {
        try (RoutingScope ignored = RoutingScope.builder().actor("window-probe").open();
                EntityManager em = emf.createEntityManager()) {
            return RoutingTestSupport.servedBy(cluster, em).isPrimary();
        }
    }

    /**
     * Every refusal docs/web.md shows as output is the filter's answer word for word, sent the value
     * the example names: the page quotes what the code says, not a paraphrase of it.
     */
    @Test
    void theRefusalsDocsWebMdShows_areWhatTheFilterAnswers() throws Exception {
        final Pattern headerRefusal = Pattern.compile("^Invalid X-Consistency-Token header '([^']*)':");
        final Pattern cookieRefusal = Pattern.compile("^Invalid consistency cookie ([^=\\s]+)='([^']*)':");
        final List<String> doc = Files.readAllLines(Path.of("..", "docs", "web.md"));
        int checked = 0;
        for (int i = 0; i < doc.size(); i++) {
            final String line = doc.get(i).trim();
            final Matcher header = headerRefusal.matcher(line);
            final Matcher cookie = cookieRefusal.matcher(line);
            final HttpResponse<String> response;
            if (header.find()) {
                response =
                        get("/notes/" + oldNote, null, ReadYourWritesFilter.CONSISTENCY_TOKEN_HEADER, header.group(1));
            } else if (cookie.find()) {
                response = get(cookieApp, "/notes/" + oldNote, null, "Cookie", cookie.group(1) + "=" + cookie.group(2));
            } else {
                continue;
            }
            assertThat(response.statusCode())
                    .as("docs/web.md line %d: %s", i + 1, response.body())
                    .isEqualTo(400);
            assertThat(response.body().trim()).as("docs/web.md line %d", i + 1).isEqualTo(line);
            checked++;
        }
        assertThat(checked).as("refusals shown in docs/web.md").isGreaterThanOrEqualTo(2);
    }

    // --- HTTP helpers ---

    private static HttpRequest.Builder request(String path, String key, String... headers) {
        return request(app, path, key, headers);
    }

    private static HttpRequest.Builder request(TestApplication to, String path, String key, String... headers) {
        final HttpRequest.Builder builder =
                HttpRequest.newBuilder(URI.create(to.url(path))).timeout(Duration.ofSeconds(30));
        if (key != null) {
            builder.header("Authorization", "Bearer " + key);
        }
        for (int i = 0; i < headers.length; i += 2) {
            builder.header(headers[i], headers[i + 1]);
        }
        return builder;
    }

    private static HttpResponse<String> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new AssertionError("HTTP request failed: " + request, e);
        }
    }

    private static HttpResponse<String> post(String key, String text, String... headers) {
        return postTo("/notes", key, text, headers);
    }

    private static HttpResponse<String> postTo(String path, String key, String text, String... headers) {
        return send(request(path, key, headers)
                .POST(HttpRequest.BodyPublishers.ofString(text))
                .build());
    }

    private static HttpResponse<String> get(String path, String key, String... headers) {
        return send(request(path, key, headers).GET().build());
    }

    private static long createdId(HttpResponse<String> response) {
        assertThat(response.statusCode()).as("POST answer: %s", response.body()).isEqualTo(201);
        final String[] lines = response.body().trim().split("\n");
        return Long.parseLong(lines[lines.length - 1].trim());
    }

    private static Node servedBy(HttpResponse<String> response) {
        final String port = response.headers()
                .firstValue(TestApplication.SERVED_BY)
                .orElseThrow(() -> new AssertionError("no " + TestApplication.SERVED_BY + " header; status "
                        + response.statusCode() + ": " + response.body()));
        return cluster.nodeForPort(Integer.parseInt(port));
    }

    /** The actor's Redis marker, a hash ({@code lsn}, {@code pending:<id>} fields); empty if there is none. */
    private static Map<String, String> marker(String key) {
        try (StatefulRedisConnection<String, String> connection = redisClient.connect()) {
            return connection.sync().hgetall("hibernate-routing:replication:" + key);
        }
    }

    private static long notesOnPrimary() throws SQLException {
        return countOnPrimary(cluster, "web_note");
    }

    // --- read-your-writes ---

    @Test
    void postThenImmediateGet_bySameKey_seesTheWrite_neverFromThePausedStandby_whileOtherKeysStillUseReplicas() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final HttpResponse<String> created = post("alice", "alice's note");
        final long id = createdId(created);
        assertThat(created.headers().firstValue("X-Consistency-Token"))
                .as("the commit position")
                .isPresent();
        assertThat(created.headers().firstValue(TestApplication.SCOPE)).hasValue("PRIMARY alice");
        for (int i = 0; i < 10; i++) {
            final HttpResponse<String> read = get("/notes/" + id, "alice");
            assertThat(read.statusCode())
                    .as("alice's read #%s served by %s", i, servedBy(read))
                    .isEqualTo(200);
            assertThat(read.body()).isEqualTo("alice's note");
            assertThat(servedBy(read)).isNotEqualTo(paused);
        }
        final Set<Node> bobsServers = new HashSet<>();
        for (int i = 0; i < 10; i++) {
            bobsServers.add(servedBy(get("/notes/" + oldNote, "bob")));
        }
        assertThat(bobsServers)
                .as(() -> "another key still reads from every replica, also the paused one; " + routing())
                .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
    }

    // Each EntityManager of the request kept its own read floor: the second one read on a paused
    // standby and missed the note the first one had just read on the primary.
    @Test
    void secondEntityManagerOfARequest_afterTheFirstReadOnThePrimary_neverGoesBackInTime() throws SQLException {
        cluster.standbys().forEach(cluster::pauseReplay);
        final long id;
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "insert into web_note values (nextval('web_note_seq'), 'no standby has this') returning id")) {
            rs.next();
            id = rs.getLong(1);
        }
        final HttpResponse<String> read = get("/notes/" + id + "?primaryThenDefault=true", null);
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(read.body())
                .as(() -> "the first EntityManager's read on the primary, then the second's; " + routing())
                .isEqualTo("no standby has this|no standby has this");
        assertThat(servedBy(read))
                .as("no standby has the note, so the primary served the second EntityManager")
                .isEqualTo(cluster.primary());
    }

    @Test
    void tokenFromAPostResponse_sentByAnotherKey_makesThatKeysReadsSeeTheWrite() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final HttpResponse<String> created = post("erin", "erin's note");
        final long id = createdId(created);
        final String token = created.headers().firstValue("X-Consistency-Token").orElseThrow();
        assertThat(ConsistencyToken.parse(token)).isNotNull();
        for (int i = 0; i < 10; i++) {
            final HttpResponse<String> read = get("/notes/" + id, "frank", "X-Consistency-Token", token);
            assertThat(read.statusCode())
                    .as("frank's read #%s with erin's token", i)
                    .isEqualTo(200);
            assertThat(servedBy(read)).isNotEqualTo(paused);
        }
    }

    @Test
    void handlerThatFlushesEarly_stillSendsNothingBeforeTheStamp_soTheTokenHeaderIsThere() {
        final HttpResponse<String> created = postTo("/notes?flushEarly=true", "grace", "flushed early");
        assertThat(created.body()).startsWith("creating");
        createdId(created);
        assertThat(created.headers().firstValue("X-Consistency-Token"))
                .as("headers were still open after the handler's flushBuffer(): the response was held back")
                .isPresent();
    }

    @Test
    void mutationResponseBeyondTheBufferLimit_stillReachesTheClientOnlyAfterTheStamp_wholeAndWithItsToken() {
        final int padding = 512 * 1024; // 128 times the filter's 4kB memory limit
        final HttpResponse<String> created =
                postTo("/notes?flushEarly=true&padding=" + padding, "grace", "beyond the limit");
        assertThat(created.body()).startsWith("creating\n" + "x".repeat(padding) + "\n");
        final long id = createdId(created);
        assertThat(created.headers().firstValue("X-Consistency-Token"))
                .as("headers were still open after the handler wrote and flushed 512 kB before its commit")
                .isPresent();
        final HttpResponse<String> read = get("/notes/" + id, "grace");
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(read.body()).isEqualTo("beyond the limit");
    }

    // --- rejected requests ---

    @Test
    void requestRefusedByAuthentication_isNeverRouted_stampedOrMarked_andItsHandlerNeverRuns() throws SQLException {
        final int runs = TestApplication.mutationHandlerRuns.get();
        final long notes = notesOnPrimary();
        final HttpResponse<String> refused = post(TestApplication.REFUSED_KEY, "must not be written");
        assertThat(refused.statusCode()).isEqualTo(401);
        assertThat(refused.headers().firstValue("X-Consistency-Token")).isEmpty();
        assertThat(marker(TestApplication.REFUSED_KEY)).as("no Redis marker").isEmpty();
        assertThat(TestApplication.mutationHandlerRuns.get()).as("handler runs").isEqualTo(runs);
        assertThat(notesOnPrimary()).isEqualTo(notes);
    }

    @Test
    void requestAlreadyAnswered403_passesThroughWithoutARoutingScope() {
        final HttpResponse<String> read = get("/notes/" + oldNote, TestApplication.SUSPENDED_KEY);
        assertThat(read.headers().firstValue(TestApplication.SCOPE)).hasValue("none");
        assertThat(marker(TestApplication.SUSPENDED_KEY)).isEmpty();
    }

    @Test
    void mutation_storesTheMarkerBeforeItsHandler_andRaisesItToTheCommit() {
        final HttpResponse<String> created = post("heidi", "marked");
        createdId(created);
        final String token = created.headers().firstValue("X-Consistency-Token").orElseThrow();
        assertThat(marker("heidi"))
                .as(
                        "the marker holds the commit's position, and the commit removed the pending field the filter stored")
                .containsExactly(Map.entry("lsn", token.substring("rl1.".length())));
    }

    @Test
    void mutationThatCommitsNothing_endsItsPendingMarkerBeforeItsAnswer_soTheActorReadsReplicas() {
        final HttpResponse<String> accepted = postTo("/api/notes/" + oldNote + "/check", "ivan", "");
        assertThat(accepted.statusCode()).isEqualTo(202);
        assertThat(marker("ivan"))
                .as("a 202 that committed nothing leaves no pending field")
                .isEmpty();
        final HttpResponse<String> missing = postTo("/api/no-such-resource", "ivan", "x");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(marker("ivan")).as("nor does a 404").isEmpty();
        for (int i = 0; i < 4; i++) {
            assertThat(servedBy(get("/notes/" + oldNote, "ivan")).isPrimary())
                    .as("ivan's read #%s (%s)", i, routing())
                    .isFalse();
        }
        final String token = post("ivan", "written")
                .headers()
                .firstValue("X-Consistency-Token")
                .orElseThrow();
        assertThat(marker("ivan"))
                .as("a mutation that commits still raises the marker")
                .containsExactly(Map.entry("lsn", token.substring("rl1.".length())));
    }

    // --- headers ---

    @Test
    void forcePrimaryTrue_readsFromThePrimary() {
        for (int i = 0; i < 4; i++) {
            assertThat(servedBy(get("/notes/" + oldNote, "ivan", "X-Force-Primary", "true")))
                    .isEqualTo(cluster.primary());
        }
        assertThat(servedBy(get("/notes/" + oldNote, "ivan", "X-Force-Primary", "false"))
                        .isPrimary())
                .isFalse();
    }

    @Test
    void forcePrimaryAndStrongConsistency_winOverAStaleReadOrReplicaPropertyOrHint() {
        for (String strategy : new String[] {"STALE_READ", "REPLICA"}) {
            for (String via : new String[] {"property", "hint"}) {
                final String path = "/notes/" + oldNote + "?strategy=" + strategy + "&via=" + via;
                final HttpResponse<String> forced = get(path, "ivan", "X-Force-Primary", "true");
                assertThat(forced.statusCode()).as(forced.body()).isEqualTo(200);
                assertThat(servedBy(forced))
                        .as("X-Force-Primary: true, with %s as %s", strategy, via)
                        .isEqualTo(cluster.primary());
                assertThat(servedBy(get(path, "judy", "Consistency", "strong")))
                        .as("Consistency: strong, with %s as %s", strategy, via)
                        .isEqualTo(cluster.primary());
                assertThat(servedBy(get(path, "judy")).isPrimary())
                        .as("without a header, %s as %s reads a replica", strategy, via)
                        .isFalse();
            }
        }
        final HttpResponse<String> annotated = get("/api/notes/" + oldNote + "/stale", "olga", "Consistency", "strong");
        assertThat(servedBy(annotated))
                .as("Consistency: strong on a @RoutingStrategy(STALE_READ) method")
                .isEqualTo(cluster.primary());
    }

    @Test
    void consistencyToken_isAFloor_staleReadAndReplicaReadsStillSeeTheWrite() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final HttpResponse<String> created = post("peggy", "peggy's note");
        final long id = createdId(created);
        final String token = created.headers().firstValue("X-Consistency-Token").orElseThrow();
        // The live standby replays the write in the background. Under REPLICA a read whose floor no replica reached
        // within the gate's wait (100 ms) fails instead of using the primary, and a busy machine may replay later:
        // wait until it has.
        cluster.awaitReplay(cluster.standby(2), cluster.currentWalLsn(), Duration.ofSeconds(30));
        final String[] paths = {
            "/notes/" + id + "?strategy=STALE_READ&via=property",
            "/notes/" + id + "?strategy=STALE_READ&via=hint",
            "/notes/" + id + "?strategy=REPLICA&via=property",
            "/notes/" + id + "?strategy=REPLICA&via=hint",
            "/api/notes/" + id + "/stale"
        };
        for (String path : paths) {
            for (int i = 0; i < 4; i++) {
                final HttpResponse<String> read = get(path, "quentin", "X-Consistency-Token", token);
                final int n = i;
                assertThat(read.statusCode())
                        .as(() -> "quentin's read #" + n + " of " + path + " with peggy's token " + token
                                + ", served by port "
                                + read.headers().firstValue(TestApplication.SERVED_BY) + ": " + read.body() + "; "
                                + routing())
                        .isEqualTo(200);
                assertThat(read.body()).isEqualTo("peggy's note");
                assertThat(servedBy(read)).isNotEqualTo(paused);
            }
        }
    }

    @Test
    void forcePrimaryYes_is400NamingTheHeaderAndTheAllowedValues() {
        final HttpResponse<String> response = get("/notes/" + oldNote, "ivan", "X-Force-Primary", "yes");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("X-Force-Primary", "'true'", "'false'");
        assertThat(response.headers().firstValue(TestApplication.SERVED_BY))
                .as("the handler did not run")
                .isEmpty();
    }

    @Test
    void consistencyEventual_is400_butStrongReadsFromThePrimary() {
        final HttpResponse<String> eventual = get("/notes/" + oldNote, "judy", "Consistency", "eventual");
        assertThat(eventual.statusCode()).isEqualTo(400);
        assertThat(eventual.body()).contains("Consistency", "'strong'");
        assertThat(servedBy(get("/notes/" + oldNote, "judy", "Consistency", "strong")))
                .isEqualTo(cluster.primary());
    }

    @Test
    void malformedConsistencyToken_is400WithTheExpectedForm() {
        final HttpResponse<String> response = get("/notes/" + oldNote, "judy", "X-Consistency-Token", "0/3000060");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("X-Consistency-Token", "'rl1.' followed by 16 hexadecimal digits");
    }

    /** How often the LSN gate asked or waited for a replica (every outcome but "known" means replicas were asked). */
    private static double replicaPositionChecks() {
        return meters.find("hibernate.routing.lsn_gate").counters().stream()
                .filter(counter -> !"known".equals(counter.getId().getTag("outcome")))
                .mapToDouble(Counter::count)
                .sum();
    }

    @Test
    void tokenAheadOfThePrimary_is400NamingTheHeader_beforeAnyReplicaIsAsked() {
        final double checks = replicaPositionChecks();
        for (String key : new String[] {null, "quinn"}) {
            final long start = System.nanoTime();
            final HttpResponse<String> response =
                    get("/notes/" + oldNote, key, "X-Consistency-Token", "rl1.7fffffffffffffff");
            // Printed, not judged: how long the answer takes depends on the machine. That no replica was waited for
            // is what the gate's meters say below.
            System.out.printf(
                    "%s's read with a token ahead of the primary: %d answered in %d ms%n",
                    key,
                    response.statusCode(),
                    Duration.ofNanos(System.nanoTime() - start).toMillis());
            assertThat(response.statusCode())
                    .as("%s's read with a token no write returned: %s", key, response.body())
                    .isEqualTo(400);
            assertThat(response.body()).contains("X-Consistency-Token", "ahead of the primary");
            assertThat(response.headers().firstValue(TestApplication.SERVED_BY))
                    .as("the handler did not run")
                    .isEmpty();
        }
        assertThat(replicaPositionChecks())
                .as(() -> "no replica was asked for its position or waited for (hibernate.routing.lsn_gate outside"
                        + " outcome=known); " + routing())
                .isEqualTo(checks);
    }

    @Test
    void tokenOfTheLibrarysPrimaryOnlyValue_is400AtParse_sayingWhy() {
        final HttpResponse<String> response =
                get("/notes/" + oldNote, "quinn", "X-Consistency-Token", "rl1.ffffffffffffffff");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        assertThat(response.body()).contains("X-Consistency-Token", "top bit");
        assertThat(response.headers().firstValue(TestApplication.SERVED_BY)).isEmpty();
    }

    @Test
    void tokenOfAWriteThisInstanceHasNotSeenYet_isAccepted_afterAskingThePrimary() throws SQLException {
        final String token;
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            // Written behind the library's back, and read at once: the health check has not seen it yet.
            s.execute("insert into web_note (id, text) values (nextval('web_note_seq') + 1000000, 'behind its back')");
            try (ResultSet rs = s.executeQuery("select pg_current_wal_insert_lsn()::text")) {
                rs.next();
                token = ConsistencyToken.ofLsn(rs.getString(1)).toString();
            }
        }
        final HttpResponse<String> read = get("/notes/" + oldNote, "quinn", "X-Consistency-Token", token);
        assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
    }

    @Test
    void serverSentEvents_runOnThePrimary() {
        final HttpResponse<String> events = get("/events", "karl", "Accept", "text/event-stream");
        assertThat(events.body()).startsWith("data: ");
        assertThat(servedBy(events)).isEqualTo(cluster.primary());
    }

    @Test
    void endpointRule_setsTheStrategyOfSafeRequests() {
        final HttpResponse<String> read = get("/reports/" + oldNote, "lena");
        assertThat(read.headers().firstValue(TestApplication.SCOPE)).hasValue("PRIMARY lena");
        assertThat(servedBy(read)).isEqualTo(cluster.primary());
        assertThat(get("/notes/" + oldNote, "lena").headers().firstValue(TestApplication.SCOPE))
                .hasValue("READ_AFTER_WRITE lena");
    }

    @Test
    void requestId_validOneIsEchoedAndInTheMdc_invalidOneIsReplaced() {
        final HttpResponse<String> kept = get("/notes/" + oldNote, "mike", "X-Request-Id", "trace-42.a_b");
        assertThat(kept.headers().firstValue("X-Request-Id")).hasValue("trace-42.a_b");
        assertThat(kept.headers().firstValue(TestApplication.MDC_ID)).hasValue("trace-42.a_b");
        final HttpResponse<String> replaced =
                get("/notes/" + oldNote, "mike", "X-Request-Id", "bad id;" + "x".repeat(200));
        final String generated = replaced.headers().firstValue("X-Request-Id").orElseThrow();
        assertThat(generated).matches("[0-9a-f-]{36}");
        assertThat(replaced.headers().firstValue(TestApplication.MDC_ID)).hasValue(generated);
        assertThat(get("/notes/" + oldNote, null).headers().firstValue("X-Request-Id"))
                .as("generated without a header")
                .isPresent();
    }

    @Test
    void anonymousRequests_areRoutedByMethodOnly_withoutMarker() {
        final HttpResponse<String> read = get("/notes/" + oldNote, null);
        assertThat(read.headers().firstValue(TestApplication.SCOPE)).hasValue("READ_AFTER_WRITE");
        assertThat(servedBy(read).isPrimary()).isFalse();
        final HttpResponse<String> created = post(null, "anonymous");
        createdId(created);
        assertThat(created.headers().firstValue(TestApplication.SCOPE)).hasValue("PRIMARY");
    }

    // --- Redis down ---

    @Test
    void mutationWithRedisStopped_is503BeforeItsHandlerRuns_andWorksAgainAfterRestart() throws Exception {
        final int runs = TestApplication.mutationHandlerRuns.get();
        final long notes = notesOnPrimary();
        redis.stop();
        try {
            final HttpResponse<String> refused = post("nina", "must not be written");
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(refused.body()).contains("Redis").doesNotContain(redis.uri());
            assertThat(TestApplication.mutationHandlerRuns.get())
                    .as("the handler never ran")
                    .isEqualTo(runs);
            assertThat(notesOnPrimary()).as("no row written").isEqualTo(notes);
            assertThat(servedBy(get("/notes/" + oldNote, "nina")))
                    .as("reads use the primary while the marker is unreadable")
                    .isEqualTo(cluster.primary());
        } finally {
            redis.restart();
        }
        // The library reconnects in the background (at most one attempt per Redis timeout): poll.
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        HttpResponse<String> again = post("nina", "after Redis came back");
        while (again.statusCode() == 503) {
            final HttpResponse<String> refused = again;
            assertThat(System.nanoTime())
                    .as(() -> "mutations work again after Redis restarts; the last answer: " + refused.statusCode()
                            + " " + refused.body())
                    .isLessThan(deadline);
            Thread.sleep(100);
            again = post("nina", "after Redis came back");
        }
        createdId(again);
    }

    // --- Jakarta REST ---

    @Test
    void annotatedResourceMethod_readsFromThePrimary_unannotatedFromAReplica() {
        for (int i = 0; i < 4; i++) {
            final HttpResponse<String> primary = get("/api/notes/" + oldNote + "/primary", "olga");
            assertThat(primary.statusCode()).as(primary.body()).isEqualTo(200);
            assertThat(servedBy(primary)).isEqualTo(cluster.primary());
            assertThat(servedBy(get("/api/notes/" + oldNote, "olga")).isPrimary())
                    .isFalse();
        }
    }

    @Test
    void annotationNeverWeakensAHeaderThatForcesThePrimary() {
        final HttpResponse<String> stale = get("/api/notes/" + oldNote + "/stale", "olga");
        assertThat(stale.headers().firstValue(TestApplication.SCOPE)).hasValue("STALE_READ olga");
        final HttpResponse<String> forced = get("/api/notes/" + oldNote + "/stale", "olga", "X-Force-Primary", "true");
        assertThat(forced.headers().firstValue(TestApplication.SCOPE)).hasValue("PRIMARY olga");
        assertThat(servedBy(forced)).isEqualTo(cluster.primary());
    }

    // --- the consistency cookie: read-your-writes without an actor ---

    /** The cookie name {@link #cookieApp} uses. */
    static final String COOKIE = "rl-consistency";

    private static HttpResponse<String> postTo(
            TestApplication to, String path, String key, String text, String... headers) {
        return send(request(to, path, key, headers)
                .POST(HttpRequest.BodyPublishers.ofString(text))
                .build());
    }

    private static HttpResponse<String> get(TestApplication to, String path, String key, String... headers) {
        return send(request(to, path, key, headers).GET().build());
    }

    /** The response's {@code Set-Cookie} headers for the consistency cookie. */
    private static List<String> consistencyCookies(HttpResponse<String> response) {
        return response.headers().allValues("Set-Cookie").stream()
                .filter(header -> header.startsWith(COOKIE + "="))
                .toList();
    }

    /** The value of the one consistency cookie the response sets. */
    private static String cookieValue(HttpResponse<String> response) {
        final List<String> cookies = consistencyCookies(response);
        assertThat(cookies)
                .as("Set-Cookie headers of the %s answer", response.statusCode())
                .hasSize(1);
        return cookies.get(0).substring(COOKIE.length() + 1).split(";", 2)[0];
    }

    /** Reads note {@code id} anonymously until the paused standby served a read; all such reads, at most 10 tries. */
    private static List<HttpResponse<String>> readsByThePausedStandby(
            TestApplication to, long id, Node paused, String... headers) {
        final List<HttpResponse<String>> byPaused = new ArrayList<>();
        for (int i = 0; i < 10 && byPaused.isEmpty(); i++) {
            final HttpResponse<String> read = get(to, "/notes/" + id, null, headers);
            if (servedBy(read).equals(paused)) {
                byPaused.add(read);
            }
        }
        return byPaused;
    }

    @Test
    void anonymousPost_setsTheCookie_andALaterGetWithIt_seesTheWrite_whereWithoutItTheReadIsStale() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final HttpResponse<String> created = postTo(cookieApp, "/notes", null, "anonymous note");
        final long id = createdId(created);
        final String token = cookieValue(created);
        assertThat(token)
                .as("the cookie holds the commit's token")
                .isEqualTo(created.headers().firstValue("X-Consistency-Token").orElseThrow());
        for (int i = 0; i < 10; i++) {
            final HttpResponse<String> read = get(cookieApp, "/notes/" + id, null, "Cookie", COOKIE + "=" + token);
            final int n = i;
            assertThat(read.statusCode())
                    .as(() ->
                            "anonymous read #" + n + " with the cookie, served by " + servedBy(read) + "; " + routing())
                    .isEqualTo(200);
            assertThat(read.body()).isEqualTo("anonymous note");
            assertThat(servedBy(read)).isNotEqualTo(paused);
        }
        // The same read without the cookie is stale where the paused standby serves it: what the cookie prevents.
        assertThat(readsByThePausedStandby(cookieApp, id, paused))
                .as(() -> "anonymous reads without the cookie use the paused standby too; " + routing())
                .isNotEmpty()
                .allSatisfy(read -> assertThat(read.statusCode()).as("stale").isEqualTo(404));
    }

    @Test
    void cookieSwitchedOff_noCookieIsSet_andOneSentAnywayIsIgnored() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final HttpResponse<String> created = post(null, "without the opt-in");
        final long id = createdId(created);
        assertThat(created.headers().allValues("Set-Cookie"))
                .as("no cookie without the init-param")
                .isEmpty();
        final String token = created.headers().firstValue("X-Consistency-Token").orElseThrow();
        assertThat(readsByThePausedStandby(app, id, paused, "Cookie", COOKIE + "=" + token))
                .as(() -> "reads with a cookie the filter does not honour use the paused standby too; " + routing())
                .isNotEmpty()
                .allSatisfy(read -> assertThat(read.statusCode()).as("stale").isEqualTo(404));
        assertThat(get(app, "/notes/" + oldNote, null, "Cookie", COOKIE + "=0/3000060")
                        .statusCode())
                .as("a malformed cookie the filter does not read")
                .isEqualTo(200);
    }

    @Test
    void cookieAttributes_httpOnlySameSiteLaxPathRootMaxAge60_notSecureOverPlainHttp_noDomain() {
        final HttpResponse<String> created = postTo(cookieApp, "/notes", null, "attributes");
        createdId(created);
        final List<String> cookies = consistencyCookies(created);
        assertThat(cookies).hasSize(1);
        final List<String> attributes = java.util.Arrays.stream(cookies.get(0).split(";"))
                .skip(1)
                .map(attribute -> attribute.trim().toLowerCase(java.util.Locale.ROOT))
                .toList();
        assertThat(attributes)
                .as(cookies.get(0))
                .contains("httponly", "samesite=lax", "path=/", "max-age=60")
                .noneMatch(attribute -> attribute.equals("secure") || attribute.startsWith("domain="));
    }

    @Test
    void malformedCookie_is400NamingTheCookie_andClearsIt_beforeTheHandlerRuns() {
        final int runs = TestApplication.mutationHandlerRuns.get();
        for (String method : new String[] {"GET", "POST"}) {
            final HttpResponse<String> response = method.equals("GET")
                    ? get(cookieApp, "/notes/" + oldNote, null, "Cookie", COOKIE + "=0/3000060")
                    : postTo(cookieApp, "/notes", null, "must not be written", "Cookie", COOKIE + "=0/3000060");
            assertThat(response.statusCode()).as(method).isEqualTo(400);
            assertThat(response.body())
                    .contains(
                            "consistency cookie " + COOKIE + "='0/3000060'", "'rl1.' followed by 16 hexadecimal digits")
                    .contains("This answer clears the cookie: repeat the request");
            assertThat(response.headers().firstValue(TestApplication.SERVED_BY)).isEmpty();
            assertThat(cookieValue(response)).as("cleared").isEmpty();
            assertThat(consistencyCookies(response).get(0).toLowerCase(java.util.Locale.ROOT))
                    .as("expired at once (Jetty writes Max-Age=0 as an Expires in 1970), for the path it was set for")
                    .containsAnyOf("max-age=0", "expires=thu, 01 jan 1970 00:00:00 gmt")
                    .contains("path=/");
        }
        assertThat(TestApplication.mutationHandlerRuns.get()).as("handler runs").isEqualTo(runs);
        assertThat(get(cookieApp, "/notes/" + oldNote, null).statusCode())
                .as("the repeated request, without the cleared cookie")
                .isEqualTo(200);
    }

    @Test
    void oneMalformedAmongSeveralCookiesOfTheName_is400() {
        final HttpResponse<String> response =
                get(cookieApp, "/notes/" + oldNote, null, "Cookie", COOKIE + "=" + oldToken + "; " + COOKIE + "=x");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains(COOKIE + "='x'");
    }

    @Test
    void cookieAheadOfThePrimary_is400NamingTheCookie_andClearsIt_beforeAnyReplicaIsAsked() {
        final double checks = replicaPositionChecks();
        final HttpResponse<String> response =
                get(cookieApp, "/notes/" + oldNote, null, "Cookie", COOKIE + "=rl1.7fffffffffffffff");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        assertThat(response.body())
                .contains("consistency cookie " + COOKIE, "ahead of the primary", "This answer clears the cookie");
        assertThat(response.headers().firstValue(TestApplication.SERVED_BY)).isEmpty();
        assertThat(cookieValue(response)).as("cleared").isEmpty();
        assertThat(replicaPositionChecks())
                .as(() -> "no replica was asked for its position or waited for; " + routing())
                .isEqualTo(checks);
    }

    @Test
    void headerAheadOfThePrimary_withAGoodCookie_is400NamingTheHeader_andKeepsTheCookie() {
        final HttpResponse<String> response = get(
                cookieApp,
                "/notes/" + oldNote,
                null,
                "Cookie",
                COOKIE + "=" + oldToken,
                "X-Consistency-Token",
                "rl1.7fffffffffffffff");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("Invalid X-Consistency-Token header", "ahead of the primary");
        assertThat(consistencyCookies(response))
                .as("the cookie was not what was wrong")
                .isEmpty();
    }

    @Test
    void headerAndCookie_theLaterPositionCounts_whicheverCarriesIt() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final HttpResponse<String> created = postTo(cookieApp, "/notes", null, "later position");
        final long id = createdId(created);
        final String token = cookieValue(created);
        final String[][] requests = {
            {"Cookie", COOKIE + "=" + token, "X-Consistency-Token", oldToken},
            {"Cookie", COOKIE + "=" + oldToken, "X-Consistency-Token", token},
            {"Cookie", COOKIE + "=" + oldToken + "; " + COOKIE + "=" + token},
            {"Cookie", COOKIE + "=" + token + "; " + COOKIE + "=" + oldToken},
        };
        for (String[] headers : requests) {
            for (int i = 0; i < 4; i++) {
                final HttpResponse<String> read = get(cookieApp, "/notes/" + id, null, headers);
                assertThat(read.statusCode())
                        .as(() -> String.join(" ", headers) + ", served by " + servedBy(read) + "; " + routing())
                        .isEqualTo(200);
                assertThat(servedBy(read)).isNotEqualTo(paused);
            }
        }
    }

    @Test
    void safeRequestsAndMutationsThatCommitNothing_setNoCookie() {
        assertThat(consistencyCookies(get(cookieApp, "/notes/" + oldNote, null)))
                .isEmpty();
        assertThat(consistencyCookies(get(cookieApp, "/notes/" + oldNote, null, "Cookie", COOKIE + "=" + oldToken)))
                .as("a read with the cookie does not renew it")
                .isEmpty();
        final HttpResponse<String> accepted = postTo(cookieApp, "/api/notes/" + oldNote + "/check", null, "");
        assertThat(accepted.statusCode()).isEqualTo(202);
        assertThat(consistencyCookies(accepted))
                .as("a 202 that committed nothing")
                .isEmpty();
    }

    @Test
    void requestsAnswered401Or403BeforeTheFilter_passThrough_neitherReadingNorSettingTheCookie() {
        final HttpResponse<String> refused = postTo(
                cookieApp,
                "/notes",
                TestApplication.REFUSED_KEY,
                "must not be written",
                "Cookie",
                COOKIE + "=0/3000060");
        assertThat(refused.statusCode())
                .as("not a 400: the cookie was not read")
                .isEqualTo(401);
        assertThat(consistencyCookies(refused)).isEmpty();
        final HttpResponse<String> suspended =
                get(cookieApp, "/notes/" + oldNote, TestApplication.SUSPENDED_KEY, "Cookie", COOKIE + "=0/3000060");
        assertThat(suspended.statusCode()).isEqualTo(403);
        assertThat(suspended.headers().firstValue(TestApplication.SCOPE)).hasValue("none");
        assertThat(consistencyCookies(suspended)).isEmpty();
    }

    @Test
    void actorsMutation_setsTheCookieToo_soASignedOutTabSeesTheWrite() {
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final HttpResponse<String> created = postTo(cookieApp, "/notes", "rita", "rita's note");
        final long id = createdId(created);
        final String token = cookieValue(created);
        for (int i = 0; i < 4; i++) {
            final HttpResponse<String> read = get(cookieApp, "/notes/" + id, null, "Cookie", COOKIE + "=" + token);
            assertThat(read.statusCode())
                    .as(() -> "anonymous read with rita's cookie; " + routing())
                    .isEqualTo(200);
            assertThat(servedBy(read)).isNotEqualTo(paused);
        }
    }
}
