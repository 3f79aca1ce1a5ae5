package io.github.hibernaterouting.sample.quarkus;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The packaged sample ({@code target/quarkus-app/quarkus-run.jar}) as a process of its own, on the test kit's
 * servers: started with {@code -D} properties, its output in a file under {@code target/}, stopped by
 * {@link #close()}.
 */
final class SampleProcess implements AutoCloseable {
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final Duration START = Duration.ofSeconds(180);
    private static final Pattern ID = Pattern.compile("\"id\":(\\d+)");

    private final Process process;
    private final Path output;
    private final int port;

    private SampleProcess(Process process, Path output, int port) {
        this.process = process;
        this.output = output;
        this.port = port;
    }

    /**
     * The properties that point the sample at {@code cluster} and {@code redis} (may be {@code null}), with a marker
     * window short enough that the replicas serve soon after the start, and a lag bound no test reaches.
     */
    static Map<String, String> properties(PostgresCluster cluster, RedisServer redis) {
        final Map<String, String> properties = new LinkedHashMap<>();
        properties.put("quarkus.datasource.jdbc.url", cluster.primary().jdbcUrl());
        properties.put("quarkus.datasource.username", cluster.user());
        properties.put("quarkus.datasource.password", cluster.password());
        properties.put(
                "quarkus.hibernate-routing.replica-urls",
                cluster.standbys().stream().map(Node::jdbcUrl).collect(Collectors.joining(",")));
        properties.put("quarkus.hibernate-routing.settings.max-replica-lag", "1h");
        if (redis != null) {
            properties.put("quarkus.hibernate-routing.redis-uri", redis.uri());
            properties.put("quarkus.hibernate-routing.settings.redis.window", "1s");
            properties.put("quarkus.hibernate-routing.settings.redis.allow-short-window", "true");
        }
        return properties;
    }

    /** Starts the sample and waits until it listens; fails with its output if it exits first. */
    static SampleProcess start(String name, Map<String, String> properties) {
        final SampleProcess sample = launch(name, properties);
        sample.awaitOutput("Listening on", START);
        return sample;
    }

    /**
     * Starts the sample with a configuration that must stop its start, and waits until it exited.
     *
     * @return its output
     * @throws AssertionError if it listens, or has not exited within the deadline
     */
    static String startFailing(String name, Map<String, String> properties) {
        try (SampleProcess sample = launch(name, properties)) {
            final long deadline = System.nanoTime() + START.toNanos();
            while (sample.process.isAlive()) {
                if (sample.output().contains("Listening on")) {
                    throw new AssertionError("The sample started although it should not have:\n" + sample.output());
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("The sample did not exit within " + START + ":\n" + sample.output());
                }
                pause();
            }
            if (sample.process.exitValue() == 0) {
                throw new AssertionError("The sample exited with 0:\n" + sample.output());
            }
            return sample.output();
        }
    }

    private static SampleProcess launch(String name, Map<String, String> properties) {
        final int port = freePort();
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.add("-Dquarkus.http.port=" + port);
        properties.forEach((key, value) -> command.add("-D" + key + "=" + value));
        command.add("-jar");
        command.add(Path.of("target", "quarkus-app", "quarkus-run.jar").toString());
        final Path output = Path.of("target", "sample-" + name + ".log");
        try {
            final Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            return new SampleProcess(process, output, port);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until the output contains {@code text}; fails if the process exits first or the deadline passes. */
    void awaitOutput(String text, Duration timeout) {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!output().contains(text)) {
            if (!process.isAlive()) {
                throw new AssertionError(
                        "The sample exited (" + process.exitValue() + ") before '" + text + "':\n" + output());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("No '" + text + "' from the sample within " + timeout + ":\n" + output());
            }
            pause();
        }
    }

    String output() {
        try {
            return Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    HttpResponse<String> send(String user, String method, String path, String body, String... headers) {
        final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (user != null) {
            request.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder().encodeToString((user + ":" + user).getBytes(StandardCharsets.UTF_8)));
        }
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        try {
            return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Creates a note as {@code user} and returns its id; fails unless the answer is 201. */
    long create(String user, String text) {
        final HttpResponse<String> created = send(user, "POST", "/api/notes", "{\"text\":\"" + text + "\"}");
        if (created.statusCode() != 201) {
            throw new AssertionError("Creating a note answered " + created.statusCode() + ": " + created.body());
        }
        return id(created);
    }

    /** The {@code id} of the note in a response's body. */
    static long id(HttpResponse<String> response) {
        final Matcher matcher = ID.matcher(response.body());
        if (!matcher.find()) {
            throw new AssertionError("No note id in: " + response.body());
        }
        return Long.parseLong(matcher.group(1));
    }

    /** Pauses WAL replay on every standby once they have replayed everything. */
    static void pauseReplicas(PostgresCluster cluster) {
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        for (Node standby : cluster.standbys()) {
            cluster.pauseReplay(standby);
        }
    }

    static String servedBy(HttpResponse<?> response) {
        return response.headers().firstValue("X-Served-By").orElse("(none)");
    }

    /** Until {@code user}'s reads of {@code path} reach a replica: the window after the first meeting with Redis. */
    void awaitReplicaReads(String user, String path) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!servedBy(send(user, "GET", path, null)).startsWith("replica")) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Reads of " + path + " never reached a replica:\n" + output());
            }
            pause();
        }
    }

    /** Until {@code /q/health/ready}'s body satisfies {@code condition}. */
    void awaitReady(java.util.function.Predicate<String> condition, Duration timeout) {
        final long deadline = System.nanoTime() + timeout.toNanos();
        String body = "";
        while (!condition.test(body = send(null, "GET", "/q/health/ready", null).body())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Readiness never met the condition; last:\n" + body);
            }
            pause();
        }
    }

    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
