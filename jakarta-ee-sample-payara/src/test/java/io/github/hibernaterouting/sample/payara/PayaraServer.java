package io.github.hibernaterouting.sample.payara;

import io.github.hibernaterouting.testkit.Jdks;
import io.github.hibernaterouting.testkit.PostgresCluster;
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
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One Payara Micro instance running the sample's WAR, as a child process ({@code java -jar
 * payara-micro.jar --deploy ...}), with the cluster's address in system properties that the WAR's
 * {@code web.xml} data sources read, its HTTP listener on 127.0.0.1 only and clustering off.
 * {@link #close} stops it; a shutdown hook does the same if the test JVM ends first. Its output
 * stays in {@code target/payara/<name>.out} for a failed run's post-mortem.
 */
final class PayaraServer implements AutoCloseable {
    /** Payara Micro's message once it has booted and deployed what it was given. */
    private static final String READY = "Payara Micro URLs:";
    /** Messages of a deployment that failed; Payara Micro keeps running without the application. */
    private static final List<String> FAILURES = List.of(
            "SEVERE",
            "Exception while loading the app",
            "Exception while deploying the app",
            "Deployment failed",
            "Failed to deploy");

    private final String name;
    private final Path output;
    private final int port;
    private final Process process;
    private final Thread shutdownHook;

    private PayaraServer(String name, Path output, int port, Process process) {
        this.name = name;
        this.output = output;
        this.port = port;
        this.process = process;
        this.shutdownHook = new Thread(this::stop, "stop-payara-" + name);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts Payara Micro (the jar given by the system property {@code sample.payara.jar}) with the
     * WAR {@code sample.payara.war} at {@code /}; does not wait for it (see {@link #awaitStarted}).
     */
    static PayaraServer start(String name, PostgresCluster cluster) throws IOException {
        final Path jar = Path.of(System.getProperty("sample.payara.jar"));
        final Path dir = jar.getParent().resolve(name);
        deleteTree(dir);
        Files.createDirectories(dir);
        final int port = freePort();
        // In a file, not on the command line: the password does not show in the process list.
        final Path properties = dir.resolve("system.properties");
        Files.writeString(
                properties,
                String.join(
                        "\n",
                        "sample.db.host=127.0.0.1",
                        "sample.db.name=" + cluster.database(),
                        "sample.db.user=" + cluster.user(),
                        "sample.db.password=" + cluster.password(),
                        "sample.db.primaryPort=" + cluster.primary().port(),
                        "sample.db.replica1Port=" + cluster.standby(1).port(),
                        "sample.db.replica2Port=" + cluster.standby(2).port(),
                        ""),
                StandardCharsets.UTF_8);
        // Before boot: the HTTP listener on loopback only (Payara Micro binds all interfaces by default).
        final Path preBoot = dir.resolve("pre-boot-commands.txt");
        Files.writeString(
                preBoot,
                "set configs.config.server-config.network-config.network-listeners.network-listener"
                        + ".http-listener.address=127.0.0.1\n",
                StandardCharsets.UTF_8);
        final Path output = jar.getParent().resolve(name + ".out");
        final List<String> command = new ArrayList<>(List.of(
                javaHome().resolve("bin/java").toString(),
                "-Xmx512m",
                "-Djava.io.tmpdir=" + dir.resolve("tmp"),
                "-jar",
                jar.toString(),
                "--deploy",
                Path.of(System.getProperty("sample.payara.war"))
                        .toAbsolutePath()
                        .toString(),
                "--contextroot",
                "/",
                "--port",
                Integer.toString(port),
                "--nocluster",
                "--nohazelcast",
                "--disablephonehome",
                "--systemproperties",
                properties.toString(),
                "--prebootcommandfile",
                preBoot.toString(),
                "--rootdir",
                dir.resolve("root").toString(),
                "--unpackdir",
                dir.resolve("runtime").toString()));
        Files.createDirectories(dir.resolve("tmp"));
        Files.createDirectories(dir.resolve("root"));
        final ProcessBuilder builder =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        return new PayaraServer(name, output, port, builder.start());
    }

    /**
     * The JDK to run Payara Micro 7 with (Java 21 or later): the system property
     * {@code sample.payara.javaHome} if set, else this JVM if it is 21 or later, else the newest
     * JDK 21+ under {@code /usr/lib/jvm}.
     */
    static Path javaHome() {
        return findJavaHome().orElseThrow(() -> new IllegalStateException(missingJavaMessage()));
    }

    /** {@link #javaHome()}, or empty when there is no JDK 21 or later. */
    static Optional<Path> findJavaHome() {
        final String configured = System.getProperty("sample.payara.javaHome", "");
        if (!configured.isBlank() && !configured.startsWith("${")) {
            return Optional.of(Path.of(configured));
        }
        return Jdks.atLeast(21);
    }

    static String missingJavaMessage() {
        return "Payara Micro 7 needs Java 21 or later and this build runs on "
                + Runtime.version().feature()
                + ", with no JDK 21+ under /usr/lib/jvm: set -Dpayara.java.home=/path/to/jdk21 (or PAYARA_JAVA_HOME)";
    }

    /**
     * Waits until Payara Micro has booted and deployed the WAR, and the application answers
     * {@code GET /status} with 200. A server that is still writing its log is still starting, however slow this
     * machine is: the wait ends only when nothing new was logged for {@code quiet}, or after {@link #MOST}.
     *
     * @throws IllegalStateException with the server's output if it failed to start, exited, or stopped making
     *     progress
     */
    void awaitStarted(Duration quiet) throws InterruptedException {
        final long started = System.nanoTime();
        final long hardDeadline = started + MOST.toNanos();
        long progressAt = started;
        int logged = -1;
        final HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        while (System.nanoTime() - progressAt < quiet.toNanos() && System.nanoTime() < hardDeadline) {
            final String log = output();
            if (log.length() != logged) {
                logged = log.length();
                progressAt = System.nanoTime();
            }
            for (String failure : FAILURES) {
                if (log.contains(failure)) {
                    throw new IllegalStateException("Payara Micro " + name + " failed (" + failure + "):\n" + log);
                }
            }
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "Payara Micro " + name + " exited with " + process.exitValue() + ":\n" + log);
            }
            if (log.contains(READY)) {
                try {
                    final HttpResponse<Void> status = http.send(
                            HttpRequest.newBuilder(uri().resolve("status"))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding());
                    if (status.statusCode() == 200) {
                        System.out.printf(
                                "Payara Micro %s started in %d s%n",
                                name,
                                Duration.ofNanos(System.nanoTime() - started).toSeconds());
                        return;
                    }
                } catch (IOException e) {
                    // Not answering yet.
                }
            }
            Thread.sleep(250); // the poll interval
        }
        throw new IllegalStateException("Payara Micro " + name + " did not start the application: nothing new logged"
                + " for " + quiet + ", or not started after " + MOST + " ("
                + Duration.ofNanos(System.nanoTime() - started).toSeconds() + " s):\n" + output());
    }

    /** The longest a start may take while the server still logs progress. */
    private static final Duration MOST = Duration.ofMinutes(15);

    /** The application's root URI. */
    URI uri() {
        return URI.create("http://127.0.0.1:" + port + "/");
    }

    /** The server's output so far. */
    String output() {
        try {
            return Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops the server (SIGTERM, so that it shuts down; then the process tree if it is still there). */
    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // The JVM is shutting down: the hook is running or ran.
        }
    }

    private synchronized void stop() {
        if (!process.isAlive()) {
            return;
        }
        final List<ProcessHandle> children = process.descendants().toList();
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        } finally {
            children.forEach(ProcessHandle::destroyForcibly);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
