package io.github.hibernaterouting.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The status page at {@code /} in a real headless Chromium: it loads, shows both replicas, and its
 * counters move after requests. Skipped without Chromium, unless {@value #REQUIRE_BROWSER} is
 * {@code true} (CI), which makes a missing browser a failure.
 */
@ExtendWith({RunningSample.Extension.class, RoutingLeakCheck.class})
class StatusPageBrowserIT {
    static final String REQUIRE_BROWSER = "hibernate.routing.requireBrowser";
    /** System property with the browser's path, if it is not one of the usual names on the PATH. */
    static final String CHROMIUM = "hibernate.routing.chromium";

    private static final Pattern ROW = Pattern.compile("<tr data-node=\"([a-z0-9]+)\"[^>]*>(.*?)</tr>", Pattern.DOTALL);
    private static final Pattern CELL = Pattern.compile("class=\"number big (reads|writes)\" data-value=\"(\\d+)\"");

    private static Path chromium;

    @BeforeEach
    void watchTheSamplesPersistenceUnit(RunningSample sample, RoutingLeakCheck leaks) {
        leaks.watch(sample.entityManagerFactory());
    }

    /** The sample is shared with the other test classes: both replicas up again, after a test that killed one. */
    @BeforeEach
    void replicasUp(RunningSample sample) {
        RoutingTestSupport.awaitReplicasUp(sample.entityManagerFactory());
    }

    /** Finds the browser, or skips (visibly, as a skipped test) or fails the test as {@value #REQUIRE_BROWSER} says. */
    private static void requireBrowser() {
        final Optional<Path> found = browser();
        if (found.isEmpty()) {
            final String message =
                    "No Chromium found (/usr/bin/chromium, chromium, chromium-browser or google-chrome on the PATH, "
                            + "or -D" + CHROMIUM + "=<path>); install it with 'apt-get install -y chromium'";
            if (Boolean.getBoolean(REQUIRE_BROWSER)) {
                fail(message + ". -D" + REQUIRE_BROWSER + "=true requires the browser test to run.");
            }
            abort(message + ". Skipping the browser test.");
        }
        chromium = found.get();
    }

    @Test
    void statusPage_showsBothReplicas_andItsCountersMoveAfterRequests(RunningSample sample) throws Exception {
        requireBrowser();
        final String before = chromium(sample, "--dump-dom");
        assertThat(before)
                .contains("hibernate-routing")
                .contains("data-node=\"primary\"")
                .contains("data-node=\"replica1\"")
                .contains("data-node=\"replica2\"")
                .doesNotContain("Cannot read /status");
        final Map<String, Long> countsBefore = counts(before);

        for (int i = 0; i < 3; i++) {
            assertThat(sample.createNote("demo-alice", "Browser " + i, "seen on the status page")
                            .statusCode())
                    .isEqualTo(201);
        }
        for (int i = 0; i < 6; i++) {
            assertThat(sample.send(sample.request("api/notes", "demo-alice").GET())
                            .statusCode())
                    .isEqualTo(200);
        }

        final String after = chromium(sample, "--dump-dom");
        final Map<String, Long> countsAfter = counts(after);
        assertThat(countsAfter.get("primary.writes"))
                .as("writes on the primary")
                .isGreaterThan(countsBefore.get("primary.writes"));
        assertThat(countsAfter.get("replica1.reads") + countsAfter.get("replica2.reads"))
                .as(() -> "reads on the replicas; " + RoutingStatus.of(sample.entityManagerFactory()))
                .isGreaterThan(countsBefore.get("replica1.reads") + countsBefore.get("replica2.reads"));
        assertThat(after).contains("data-reason=\"write\"");

        final Path screenshot =
                Path.of(System.getProperty("sample.screenshotDir", "target")).resolve("status-page.png");
        Files.createDirectories(screenshot.getParent());
        Files.deleteIfExists(screenshot);
        chromium(sample, "--screenshot=" + screenshot.toAbsolutePath(), "--window-size=1200,1000", "--hide-scrollbars");
        assertThat(screenshot).isRegularFile();
        assertThat(Files.size(screenshot)).isGreaterThan(10_000);
    }

    /** Reads and writes per node, as the page shows them: {@code replica1.reads} → 12. */
    private static Map<String, Long> counts(String dom) {
        final Map<String, Long> counts = new HashMap<>();
        final Matcher row = ROW.matcher(dom);
        while (row.find()) {
            final Matcher cell = CELL.matcher(row.group(2));
            while (cell.find()) {
                counts.put(row.group(1) + "." + cell.group(1), Long.parseLong(cell.group(2)));
            }
        }
        assertThat(counts)
                .as("counters in the page")
                .containsKeys("primary.writes", "replica1.reads", "replica2.reads");
        return counts;
    }

    /** Runs headless Chromium on the page with a fresh profile; returns what it printed on stdout. */
    private static String chromium(RunningSample sample, String... action) throws IOException, InterruptedException {
        final Path profile = Files.createTempDirectory("sample-chromium-");
        try {
            final List<String> command = new ArrayList<>(List.of(
                    chromium.toString(),
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-dev-shm-usage",
                    "--user-data-dir=" + profile,
                    "--virtual-time-budget=3000"));
            command.addAll(List.of(action));
            command.add(sample.uri().toString());
            final Path stdout = profile.resolve("stdout.txt");
            final Path stderr = profile.resolve("stderr.txt");
            final Process process = new ProcessBuilder(command)
                    .redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile())
                    .start();
            if (!process.waitFor(90, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                fail("Chromium did not finish within 90 s: " + Files.readString(stderr, StandardCharsets.UTF_8));
            }
            assertThat(process.exitValue())
                    .as("Chromium's exit code; its stderr: %s", Files.readString(stderr, StandardCharsets.UTF_8))
                    .isZero();
            return Files.readString(stdout, StandardCharsets.UTF_8);
        } finally {
            deleteTree(profile);
        }
    }

    private static Optional<Path> browser() {
        final String configured = System.getProperty(CHROMIUM);
        if (configured != null && !configured.isBlank()) {
            return Optional.of(Path.of(configured)).filter(Files::isExecutable);
        }
        if (Files.isExecutable(Path.of("/usr/bin/chromium"))) {
            return Optional.of(Path.of("/usr/bin/chromium"));
        }
        final String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        return Stream.of("chromium", "chromium-browser", "google-chrome")
                .flatMap(name -> Stream.of(path.split(":")).map(dir -> Path.of(dir, name)))
                .filter(Files::isExecutable)
                .findFirst();
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
