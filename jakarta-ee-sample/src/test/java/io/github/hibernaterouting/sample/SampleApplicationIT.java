package io.github.hibernaterouting.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The sample's core flow over HTTP, against a real primary, two streaming replicas and Redis. */
@ExtendWith({RunningSample.Extension.class, RoutingLeakCheck.class})
class SampleApplicationIT {
    private static final Pattern ID = Pattern.compile("\"id\":(\\d+)");
    private static final Pattern TOKEN = Pattern.compile("rl1\\.[0-9a-f]{16}");
    private static final Pattern CREATED_AT = Pattern.compile("\"createdAt\":\"([^\"]+)\"");

    @BeforeEach
    void watchTheSamplesPersistenceUnit(RunningSample sample, RoutingLeakCheck leaks) {
        leaks.watch(sample.entityManagerFactory());
    }

    /**
     * The sample is shared with the other test classes, and nothing heals it between them: wait until the standbys
     * replayed everything and the library sees both replicas up again (an earlier test may have killed one).
     */
    @BeforeEach
    void replicasCaughtUpAndUp(RunningSample sample) {
        sample.servers().cluster().awaitCaughtUp(Duration.ofSeconds(30));
        RoutingTestSupport.awaitReplicasUp(sample.entityManagerFactory());
    }

    /** Each node's state and the latest routing decisions, newest first: for failure messages. */
    private static String routing(RunningSample sample) {
        final RoutingStatus status = RoutingStatus.of(sample.entityManagerFactory());
        return "nodes " + status.nodes() + ", latest decisions "
                + status.decisions().subList(0, Math.min(10, status.decisions().size()));
    }

    @Test
    void postThenGet_whileReplica1ReplayIsPaused_readsTheNoteAndNeverFromReplica1(RunningSample sample)
            throws Exception {
        final PostgresCluster cluster = sample.servers().cluster();
        final Node replica1 = cluster.standby(1);
        cluster.pauseReplay(replica1);
        try {
            final List<String> servedBy = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                final HttpResponse<String> created =
                        sample.createNote("demo-alice", "Paused " + i, "written while replica1 is paused");
                assertThat(created.statusCode()).isEqualTo(201);
                assertThat(created.headers().firstValue("X-Consistency-Token"))
                        .hasValueSatisfying(token -> assertThat(token).matches(TOKEN));
                assertThat(created.headers().firstValue("X-Served-By")).hasValue("primary");
                final String location = created.headers().firstValue("Location").orElseThrow();

                final HttpResponse<String> read =
                        sample.send(sample.request(location, "demo-alice").GET());
                assertThat(read.statusCode())
                        .as("GET %s right after the POST", location)
                        .isEqualTo(200);
                assertThat(read.body()).contains("\"title\":\"Paused " + i + "\"");
                servedBy.add(read.headers().firstValue("X-Served-By").orElseThrow());
            }
            assertThat(servedBy)
                    .as("X-Served-By of the reads")
                    .doesNotContain("replica1")
                    .allMatch(node -> node.equals("primary") || node.equals("replica2"));
        } finally {
            cluster.resumeReplay(replica1);
        }
    }

    @Test
    void createdAt_returnedByThePost_isWhatEveryLaterReadReturns(RunningSample sample) throws Exception {
        for (int i = 0; i < 5; i++) {
            final HttpResponse<String> created = sample.createNote("demo-alice", "Stamped " + i, "created at");
            assertThat(created.statusCode()).isEqualTo(201);
            final String location = created.headers().firstValue("Location").orElseThrow();
            final HttpResponse<String> read =
                    sample.send(sample.request(location, "demo-alice").GET());
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(createdAt(read.body()))
                    .as("createdAt of the GET, against the POST's %s", created.body())
                    .isEqualTo(createdAt(created.body()));
        }
    }

    private static String createdAt(String json) {
        final Matcher m = CREATED_AT.matcher(json);
        assertThat(m.find()).as("createdAt in %s", json).isTrue();
        return m.group(1);
    }

    @Test
    void list_withItsStaleReadHint_isServedByAReplica_evenRightAfterAWrite(RunningSample sample) throws Exception {
        assertThat(sample.createNote("demo-bob", "Listed", "stale reads are fine for lists")
                        .statusCode())
                .isEqualTo(201);
        final HttpResponse<String> list =
                sample.send(sample.request("api/notes", "demo-bob").GET());
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.headers().firstValue("X-Served-By"))
                .as(() -> routing(sample))
                .hasValueSatisfying(node -> assertThat(node).matches("replica[12]"));
    }

    @Test
    void requests_withoutOrWithUnknownKey_are401_andReadOnlyKeyWrites_are403(RunningSample sample) throws Exception {
        assertThat(sample.send(sample.request("api/notes", null).GET()).statusCode())
                .isEqualTo(401);
        assertThat(sample.send(sample.request("api/notes", "no-such-key").GET()).statusCode())
                .isEqualTo(401);
        assertThat(sample.createNote("demo-readonly", "Nope", "read-only keys cannot write")
                        .statusCode())
                .isEqualTo(403);
        assertThat(sample.send(sample.request("api/notes", "demo-readonly").GET())
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void invalidConsistencyToken_is400(RunningSample sample) throws Exception {
        final HttpResponse<String> response = sample.send(sample.request("api/notes", "demo-alice")
                .header("X-Consistency-Token", "not-a-token")
                .GET());
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("X-Consistency-Token");
    }

    @Test
    void me_isServedByThePrimary(RunningSample sample) throws Exception {
        final HttpResponse<String> me =
                sample.send(sample.request("api/me", "demo-bob").GET());
        assertThat(me.statusCode()).isEqualTo(200);
        assertThat(me.body()).contains("\"name\":\"Bob\"");
        assertThat(me.headers().firstValue("X-Served-By")).hasValue("primary");
    }

    @Test
    void dryRun_insertsInATransactionThatRollsBack_leavingNoRowAndNoStamp(RunningSample sample) throws Exception {
        final PostgresCluster cluster = sample.servers().cluster();
        // A committed write first, so that the user has a stamp a rolled-back write could wrongly move.
        assertThat(sample.createNote("demo-bob", "Before the dry run", "kept").statusCode())
                .isEqualTo(201);
        final String stampBefore = stamp(cluster, "demo-bob");
        assertThat(stampBefore).isNotNull();

        final HttpResponse<String> dryRun = sample.send(sample.request("api/notes?dryRun=true", "demo-bob")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"title\":\"Dry run\",\"body\":\"not kept\"}")));

        assertThat(dryRun.statusCode()).as(dryRun.body()).isEqualTo(200);
        assertThat(dryRun.headers().firstValue("X-Served-By")).hasValue("primary");
        assertThat(dryRun.headers().firstValue("X-Consistency-Token")).isEmpty();
        final Matcher id = ID.matcher(dryRun.body());
        assertThat(id.find()).as("the id the insert got, in %s", dryRun.body()).isTrue();
        try (var connection = cluster.connect(cluster.primary());
                var statement = connection.prepareStatement("select count(*) from notes where id = ?")) {
            statement.setLong(1, Long.parseLong(id.group(1)));
            try (var result = statement.executeQuery()) {
                result.next();
                assertThat(result.getLong(1)).as("rows of the rolled-back note").isZero();
            }
        }
        assertThat(stamp(cluster, "demo-bob")).as("the user's stamp").isEqualTo(stampBefore);
    }

    /** The user's stamp, read on the primary. */
    private static String stamp(PostgresCluster cluster, String apiKey) throws Exception {
        try (var connection = cluster.connect(cluster.primary());
                var statement =
                        connection.prepareStatement("select read_after_write_lsn::text from users where api_key = ?")) {
            statement.setString(1, apiKey);
            try (var result = statement.executeQuery()) {
                result.next();
                return result.getString(1);
            }
        }
    }

    @Test
    void patchAndDelete_changeTheNote_andTheNextReadSeesIt(RunningSample sample) throws Exception {
        final String location = sample.createNote("demo-bob", "Draft", "first words")
                .headers()
                .firstValue("Location")
                .orElseThrow();
        final HttpResponse<String> patched = sample.send(sample.request(location, "demo-bob")
                .header("Content-Type", "application/json")
                .method("PATCH", HttpRequest.BodyPublishers.ofString("{\"title\":\"Final\"}")));
        assertThat(patched.statusCode()).isEqualTo(200);
        assertThat(sample.send(sample.request(location, "demo-bob").GET()).body())
                .contains("\"title\":\"Final\"");
        assertThat(sample.send(sample.request(location, "demo-alice").GET()).statusCode())
                .as("another user's note")
                .isEqualTo(404);
        assertThat(sample.send(sample.request(location, "demo-bob").DELETE()).statusCode())
                .isEqualTo(204);
        assertThat(sample.send(sample.request(location, "demo-bob").GET()).statusCode())
                .isEqualTo(404);
    }

    @Test
    void worker_countsWords_andRedeliversWithBackoffWhileNoReplicaHasTheWrite(RunningSample sample) throws Exception {
        final PostgresCluster cluster = sample.servers().cluster();
        final long redeliveriesBefore = redeliveries(sample);
        cluster.pauseReplay(cluster.standby(1));
        cluster.pauseReplay(cluster.standby(2));
        final String location;
        try {
            location = sample.createNote("demo-bob", "Counted", "one two three four")
                    .headers()
                    .firstValue("Location")
                    .orElseThrow();
            // No replica can replay the note now: under RETRY the worker gives the message back, again and again.
            awaitTrue(() -> redeliveries(sample) >= redeliveriesBefore + 2, Duration.ofSeconds(30), "two redeliveries");
            assertThat(sample.send(sample.request(location, "demo-bob").GET()).body())
                    .contains("\"words\":null");
        } finally {
            cluster.resumeReplay(cluster.standby(1));
            cluster.resumeReplay(cluster.standby(2));
        }
        awaitTrue(
                () -> sample.send(sample.request(location, "demo-bob").GET())
                        .body()
                        .contains("\"words\":5"),
                Duration.ofSeconds(30),
                "the word count after replay resumed");
        assertThat(sample.send(sample.request(location, "demo-bob").GET()).body())
                .as(() -> "the worker read the note from a replica once one had replayed it; " + routing(sample))
                .containsPattern("\"wordsReadFrom\":\"replica[12]\"");
    }

    @Test
    void events_runOnThePrimary(RunningSample sample) throws Exception {
        final HttpResponse<Stream<String>> response = sample.http()
                .send(
                        sample.request("api/events", "demo-alice")
                                .header("Accept", "text/event-stream")
                                .GET()
                                .build(),
                        HttpResponse.BodyHandlers.ofLines());
        try (Stream<String> lines = response.body()) {
            assertThat(response.statusCode()).isEqualTo(200);
            final List<String> first = lines.limit(2).toList();
            assertThat(first.get(0)).isEqualTo("event: hello");
            assertThat(first.get(1)).contains("\"servedBy\":\"primary\"");
        }
    }

    @Test
    void metrics_haveTheRoutingMeters(RunningSample sample) throws Exception {
        sample.send(sample.request("api/notes", "demo-alice").GET());
        final HttpResponse<String> metrics =
                sample.send(sample.request("metrics", null).GET());
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body())
                .contains("hibernate_routing_statements")
                .contains("hibernate_routing_replica_lag_bytes")
                .doesNotContain(sample.servers().cluster().password());
    }

    @Test
    void printedWalkthrough_works(RunningSample sample) throws Exception {
        final List<String> commands = SampleApplication.walkthrough(sample.uri());
        assertThat(commands).hasSize(3);
        final String script = String.join("\n", commands) + "\n";
        if (Files.isExecutable(Path.of("/bin/bash")) && onPath("curl")) {
            final Process process = new ProcessBuilder("/bin/bash", "-euo", "pipefail", "-c", script)
                    .redirectErrorStream(true)
                    .start();
            final String output;
            try (BufferedReader reader =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                output = String.join("\n", reader.lines().toList());
            }
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(process.exitValue()).as(output).isZero();
            assertThat(output)
                    .contains("HTTP/1.1 201")
                    .containsPattern("X-Consistency-Token: " + TOKEN.pattern())
                    .contains("X-Served-By: primary");
            // The read of the new note: a 200 with the note, right after the 201.
            final String afterCreate = output.substring(output.indexOf("HTTP/1.1 201") + 1);
            assertThat(afterCreate)
                    .contains("HTTP/1.1 200")
                    .contains("\"body\":\"Read your own writes\"")
                    .containsPattern("X-Served-By: (primary|replica1|replica2)");
        } else {
            // Without curl, the same requests from Java.
            final HttpResponse<String> created =
                    sample.createNote(SampleApplication.DEMO_KEY, "Hello", "Read your own writes");
            assertThat(created.statusCode()).isEqualTo(201);
            final Matcher id = ID.matcher(created.body());
            assertThat(id.find()).isTrue();
            assertThat(sample.send(sample.request("api/notes/" + id.group(1), SampleApplication.DEMO_KEY)
                                    .GET())
                            .statusCode())
                    .isEqualTo(200);
            assertThat(sample.send(sample.request("api/notes", SampleApplication.DEMO_KEY)
                                    .GET())
                            .statusCode())
                    .isEqualTo(200);
        }
    }

    private static boolean onPath(String program) {
        final String path = System.getenv("PATH");
        return path != null && Stream.of(path.split(":")).anyMatch(dir -> Files.isExecutable(Path.of(dir, program)));
    }

    private static long redeliveries(RunningSample sample) throws Exception {
        final Matcher matcher = Pattern.compile("\"workerRedeliveries\":(\\d+)")
                .matcher(sample.send(sample.request("status", null).GET()).body());
        assertThat(matcher.find()).isTrue();
        return Long.parseLong(matcher.group(1));
    }

    @FunctionalInterface
    interface Condition {
        boolean holds() throws Exception;
    }

    private static void awaitTrue(Condition condition, Duration timeout, String what) throws Exception {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out after " + timeout + " waiting for " + what);
            }
            Thread.sleep(50);
        }
    }
}
