package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.TestApplication;
import io.github.hibernaterouting.testkit.Jdks;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The starter with {@code spring.threads.virtual.enabled=true}, the one property Spring Boot users
 * switch virtual threads on with: requests run on virtual threads, reads are routed, and while Redis
 * is down every read is still answered (from the primary) and only mutations are refused, until it
 * is back. The build runs on Java 17, which has no virtual threads, so the application runs in a JVM
 * of Java 21 or later (this one if it is, else the newest under {@code /usr/lib/jvm}, or
 * {@code -Dit.virtualThreads.javaHome}); without one the test is skipped, except in CI.
 */
class VirtualThreadsIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER =
            PostgresClusterExtension.withStandbys(1).withRedis();

    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @Test
    void withVirtualThreadsOn_readsAreServedThroughARedisOutage_andMutationsResumeAfterIt() throws Exception {
        final Optional<Path> java = javaHome();
        if (java.isEmpty()) {
            assertThat(System.getenv("CI"))
                    .as("a JDK 21 or later is required in CI")
                    .isNotEqualTo("true");
            Assumptions.abort("no JDK 21 or later to run an application with virtual threads");
        }
        final Map<String, Object> properties = TestApplication.properties(CLUSTER.cluster());
        properties.put("server.port", "0");
        properties.put("spring.threads.virtual.enabled", "true");
        properties.put("hibernate.routing.redis.uri", CLUSTER.redis().uri());
        properties.put("hibernate.routing.redis.timeout", "1s");
        properties.put("hibernate.routing.redis.window", "1s");
        properties.put("hibernate.routing.redis.allow_short_window", "true");
        final List<String> command = new ArrayList<>(List.of(
                java.get().resolve("bin/java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                VirtualThreadsMain.class.getName()));
        properties.forEach((key, value) -> command.add(key + "=" + value));
        final Process app =
                new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            final Http alice = new Http(awaitPort(app), "alice");
            assertThat(alice.get("/thread").body()).as("the request's thread").isEqualTo("virtual");
            assertThat(alice.post("/notes", "before the outage").statusCode()).isEqualTo(200);

            CLUSTER.redis().stop();
            final List<CompletableFuture<HttpResponse<String>>> reads = new ArrayList<>();
            final List<CompletableFuture<HttpResponse<String>>> writes = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                reads.add(CompletableFuture.supplyAsync(() -> call(() -> alice.get("/port"))));
                writes.add(CompletableFuture.supplyAsync(() -> call(() -> alice.post("/notes", "during the outage"))));
            }
            for (CompletableFuture<HttpResponse<String>> read : reads) {
                final HttpResponse<String> response = read.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                assertThat(response.statusCode())
                        .as("a read while Redis is down: %s", response.body())
                        .isEqualTo(200);
            }
            for (CompletableFuture<HttpResponse<String>> write : writes) {
                final HttpResponse<String> response = write.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                assertThat(response.statusCode())
                        .as("a mutation while Redis is down: %s", response.body())
                        .isEqualTo(503);
            }

            CLUSTER.redis().restart();
            final long deadline = System.nanoTime() + DEADLINE.toNanos();
            HttpResponse<String> after = alice.post("/notes", "after the outage");
            while (after.statusCode() != 200 && System.nanoTime() < deadline) {
                Thread.sleep(50);
                after = alice.post("/notes", "after the outage");
            }
            assertThat(after.statusCode())
                    .as("a mutation once Redis is back: %s", after.body())
                    .isEqualTo(200);
        } finally {
            app.getOutputStream().close();
            if (!app.waitFor(30, TimeUnit.SECONDS)) {
                app.destroyForcibly();
            }
        }
    }

    private interface Call {
        HttpResponse<String> run() throws Exception;
    }

    private static HttpResponse<String> call(Call call) {
        try {
            return call.run();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reads the application's output until it says its port; its output is echoed, for failure reports. */
    private static int awaitPort(Process app) throws IOException {
        final BufferedReader output =
                new BufferedReader(new InputStreamReader(app.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = output.readLine()) != null) {
            System.out.println("[app] " + line);
            if (line.startsWith("PORT=")) {
                final Thread echo = new Thread(() -> output.lines().forEach(l -> System.out.println("[app] " + l)));
                echo.setDaemon(true);
                echo.start();
                return Integer.parseInt(line.substring("PORT=".length()).trim());
            }
        }
        throw new AssertionError("the application ended before it listened; exit code " + app.exitValue());
    }

    /** A JDK 21 or later: the configured one, this JVM, or the newest under /usr/lib/jvm. */
    private static Optional<Path> javaHome() {
        final String configured = System.getProperty("it.virtualThreads.javaHome", "");
        return configured.isBlank() ? Jdks.atLeast(21) : Optional.of(Path.of(configured));
    }
}
