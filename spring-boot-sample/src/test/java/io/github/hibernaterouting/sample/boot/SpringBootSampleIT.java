package io.github.hibernaterouting.sample.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import jakarta.persistence.EntityManagerFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** The sample as its README walks through it: over HTTP, with the replicas' replay paused. */
class SpringBootSampleIT {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private static PostgresCluster cluster;
    private static ConfigurableApplicationContext sample;
    private static int port;

    @BeforeAll
    static void start() {
        cluster = PostgresCluster.builder().standbys(2).start();
        // A time bound on replica lag no test reaches (the sample's default is 10 s): a slow machine must not make
        // the paused replicas ineligible before bob's read. Not 0: that switches the bound off but leaves lag data
        // older than three health-check intervals counting as unknown, so a check that a busy machine delays would
        // make the replicas ineligible.
        // A short marker window: for one window after the library first meets a Redis, every actor reads
        // from the primary (a Redis that may have lost markers), which would hide the replicas.
        sample = SpringBootSample.run(
                cluster,
                RedisServer.start(),
                "--server.port=0",
                "--hibernate.routing.max_replica_lag=1h",
                "--hibernate.routing.redis.window=1s",
                "--hibernate.routing.redis.allow_short_window=true");
        port = ((WebServerApplicationContext) sample).getWebServer().getPort();
    }

    /** Until bob's reads go to a replica: the window after the library first met Redis has ended. */
    private static void awaitMarkerWindowOver() throws Exception {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!send("bob", "GET", "/api/notes", null)
                .headers()
                .firstValue("X-Served-By")
                .orElse("")
                .startsWith("replica")) {
            assertThat(System.nanoTime())
                    .as(() -> "the marker window ended; " + routing())
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** Both replicas answered their health check and their circuit breakers are closed (checked in the background). */
    @BeforeEach
    void replicasUp() throws Exception {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!RoutingStatus.of(sample.getBean(EntityManagerFactory.class)).nodes().stream()
                .allMatch(RoutingStatus.Node::up)) {
            assertThat(System.nanoTime())
                    .as(() -> "both replicas up; " + routing())
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** Each node's state and the latest routing decisions, newest first: for failure messages. */
    private static String routing() {
        final RoutingStatus status = RoutingStatus.of(sample.getBean(EntityManagerFactory.class));
        return "nodes " + status.nodes() + ", latest decisions "
                + status.decisions().subList(0, Math.min(10, status.decisions().size()));
    }

    @AfterAll
    static void stop() {
        if (sample != null) {
            sample.close(); // closes the servers too
        } else if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aUsersNote_isReadBackAtOnce_whileTheReplicasLag_andOthersReadFromAReplica() throws Exception {
        awaitMarkerWindowOver();
        assertThat(send("alice", "POST", "/demo/replicas/pause", "").statusCode())
                .isEqualTo(200);
        assertThat(cluster.standbys()).allMatch(cluster::isReplayPaused);

        final HttpResponse<String> created = send("alice", "POST", "/api/notes", "{\"text\":\"hello from alice\"}");
        assertThat(created.statusCode()).isEqualTo(201);
        assertThat(created.headers().firstValue("X-Consistency-Token")).isPresent();
        final Matcher id = Pattern.compile("\"id\":(\\d+)").matcher(created.body());
        assertThat(id.find()).as(created.body()).isTrue();

        final HttpResponse<String> aliceReads = send("alice", "GET", "/api/notes/" + id.group(1), null);
        assertThat(aliceReads.statusCode()).isEqualTo(200);
        assertThat(aliceReads.body()).contains("hello from alice");
        assertThat(aliceReads.headers().firstValue("X-Served-By")).contains("primary");

        final HttpResponse<String> bobReads = send("bob", "GET", "/api/notes/" + id.group(1), null);
        assertThat(bobReads.statusCode())
                .as(() -> "bob's read, served by " + bobReads.headers().firstValue("X-Served-By") + "; " + routing())
                .isEqualTo(404);
        assertThat(bobReads.headers().firstValue("X-Served-By").orElseThrow()).startsWith("replica");

        // As the README shows: alice's token has the form its example has, and each token sent in the README's
        // commands gets the answer printed under the command.
        final String token = created.headers().firstValue("X-Consistency-Token").orElseThrow();
        assertThat(token).matches("rl1\\.[0-9a-f]{16}");
        final List<String> readme = Files.readAllLines(Path.of("README.md"));
        final Pattern sent = Pattern.compile("-H 'X-Consistency-Token: ([^']+)'");
        int examples = 0;
        for (int i = 0; i < readme.size(); i++) {
            final String line = readme.get(i);
            if (line.startsWith("X-Consistency-Token: ")) {
                examples++;
                assertThat(line.substring("X-Consistency-Token: ".length()))
                        .as("README.md line %d", i + 1)
                        .matches("rl1\\.[0-9a-f]{16}");
            }
            final Matcher command = sent.matcher(line);
            if (command.find() && i + 1 < readme.size() && readme.get(i + 1).startsWith("HTTP/1.1 ")) {
                examples++;
                final String example = command.group(1);
                // The README's note is alice's: her token where it shows one.
                final String value = example.matches("rl1\\.[0-9a-f]{16}") ? token : example;
                final int expected = Integer.parseInt(
                        readme.get(i + 1).substring("HTTP/1.1 ".length()).trim());
                assertThat(send("bob", "GET", "/api/notes/" + id.group(1), null, "X-Consistency-Token", value)
                                .statusCode())
                        .as("README.md line %d: %s", i + 1, line)
                        .isEqualTo(expected);
            }
        }
        assertThat(examples).as("README.md's token examples").isGreaterThanOrEqualTo(3);

        final HttpResponse<String> fresh = send("bob", "GET", "/api/notes/" + id.group(1) + "/fresh", null);
        assertThat(fresh.statusCode()).isEqualTo(200);
        assertThat(fresh.headers().firstValue("X-Served-By")).contains("primary");

        assertThat(send("alice", "POST", "/demo/replicas/resume", "").statusCode())
                .isEqualTo(200);
        assertThat(send("bob", "GET", "/api/notes/" + id.group(1), null).statusCode())
                .isEqualTo(200);
    }

    @Test
    void aBodyWithoutText_isA400WithProblemDetailsNamingTheField() throws Exception {
        for (String body : List.of("{\"txt\":\"hello\"}", "{\"text\":\" \"}", "not json")) {
            final HttpResponse<String> refused = send("alice", "POST", "/api/notes", body);
            assertThat(refused.statusCode()).as(body).isEqualTo(400);
            assertThat(refused.headers().firstValue("Content-Type"))
                    .as(body)
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
            assertThat(refused.body()).as(body).contains("\"status\":400");
        }
        assertThat(send("alice", "POST", "/api/notes", "{\"txt\":\"hello\"}").body())
                .contains("\"field\":\"text\"");
    }

    @Test
    void health_showsThePrimaryAndBothReplicas() throws Exception {
        final HttpResponse<String> health = send(null, "GET", "/actuator/health/hibernateRouting", null);
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        assertThat(health.body()).contains("\"primary\"", "\"replica1\"", "\"replica2\"");
    }

    private static HttpResponse<String> send(String user, String method, String path, String json, String... headers)
            throws Exception {
        final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(
                        method,
                        json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            request.header("Content-Type", "application/json");
        }
        if (user != null) {
            request.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder()
                                    .encodeToString((user + ":" + user + "-pw").getBytes(StandardCharsets.UTF_8)));
        }
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
