package io.github.hibernaterouting.sample.liberty;

import io.github.hibernaterouting.testkit.PostgresCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One Open Liberty server running the sample's WAR, as a child process ({@code wlp/bin/server run}),
 * configured by the module's {@code server.xml} with the cluster's ports in its
 * {@code bootstrap.properties}, listening on 127.0.0.1 only. {@link #close} stops it and deletes its
 * directory; a shutdown hook does the same if the test JVM ends first.
 */
final class LibertyServer implements AutoCloseable {
    /** Liberty's message: an application started. */
    private static final String APP_STARTED = "CWWKZ0001I";
    /** Liberty's messages: an application failed to start; the server failed to start. */
    private static final List<String> FAILURES =
            List.of("CWWKZ0002E", "CWWKZ0004E", "CWWKE0005E", "CWWKF0001E", "CWWJP0015E");

    private final String name;
    private final Path home;
    private final Path serverDir;
    private final Path output;
    private final int port;
    private final Process process;
    private final Thread shutdownHook;

    private LibertyServer(String name, Path home, Path serverDir, Path output, int port, Process process) {
        this.name = name;
        this.home = home;
        this.serverDir = serverDir;
        this.output = output;
        this.port = port;
        this.process = process;
        this.shutdownHook = new Thread(this::stop, "stop-liberty-" + name);
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Creates the server {@code name} in the Liberty installation given by the system property
     * {@code sample.liberty.home} and starts it; does not wait for the application (see
     * {@link #awaitStarted}).
     */
    static LibertyServer start(String name, PostgresCluster cluster) throws IOException {
        final Path home = Path.of(System.getProperty("sample.liberty.home"));
        final Path serverDir = home.resolve("usr/servers").resolve(name);
        deleteTree(serverDir);
        Files.createDirectories(serverDir);
        Files.copy(Path.of(System.getProperty("sample.liberty.serverXml")), serverDir.resolve("server.xml"));
        final int port = freePort();
        Files.writeString(
                serverDir.resolve("bootstrap.properties"),
                String.join(
                        "\n",
                        "http.host=127.0.0.1",
                        "http.port=" + port,
                        "sample.war="
                                + Path.of(System.getProperty("sample.liberty.war"))
                                        .toAbsolutePath(),
                        "db.host=127.0.0.1",
                        "db.name=" + cluster.database(),
                        "db.user=" + cluster.user(),
                        "db.password=" + cluster.password(),
                        "primary.port=" + cluster.primary().port(),
                        "replica1.port=" + cluster.standby(1).port(),
                        "replica2.port=" + cluster.standby(2).port(),
                        "com.ibm.ws.logging.console.format=SIMPLE",
                        ""),
                StandardCharsets.UTF_8);
        Files.writeString(serverDir.resolve("jvm.options"), "-Xmx512m\n", StandardCharsets.UTF_8);
        final Path output = home.getParent().resolve(name + ".out");
        final ProcessBuilder builder = new ProcessBuilder(
                        home.resolve("bin/server").toString(), "run", name)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile());
        builder.environment().remove("WLP_USER_DIR");
        builder.environment().remove("WLP_OUTPUT_DIR");
        return new LibertyServer(name, home, serverDir, output, port, builder.start());
    }

    /**
     * Waits until the application has started ({@value #APP_STARTED} in {@code messages.log}).
     *
     * @throws IllegalStateException with the server's log if it failed to start, exited or timed out
     */
    void awaitStarted(Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        final Path messages = serverDir.resolve("logs/messages.log");
        while (System.nanoTime() < deadline) {
            final String log = read(messages);
            if (log.contains(APP_STARTED)) {
                return;
            }
            for (String failure : FAILURES) {
                if (log.contains(failure)) {
                    throw new IllegalStateException("Liberty server " + name + " failed (" + failure + "):\n" + log);
                }
            }
            if (!process.isAlive()) {
                throw new IllegalStateException("Liberty server " + name + " exited with " + process.exitValue() + ":\n"
                        + read(output) + "\n" + log);
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException(
                "Liberty server " + name + " did not start the application within " + timeout + ":\n" + read(messages));
    }

    /** The application's root URI. */
    URI uri() {
        return URI.create("http://127.0.0.1:" + port + "/");
    }

    /** The server's {@code messages.log} so far. */
    String messages() {
        return read(serverDir.resolve("logs/messages.log"));
    }

    /** Stops the server ({@code server stop}, then the process tree if it is still there) and deletes its files. */
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
        if (process.isAlive()) {
            try {
                final Process stop = new ProcessBuilder(
                                home.resolve("bin/server").toString(), "stop", name)
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start();
                stop.waitFor(60, TimeUnit.SECONDS);
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.descendants().forEach(ProcessHandle::destroyForcibly);
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (IOException e) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            } catch (InterruptedException e) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        // Kept for a failed run's post-mortem: target/liberty/<name>.out and <name>-logs (messages.log, FFDC).
        try {
            final Path logs = serverDir.resolve("logs");
            final Path kept = home.getParent().resolve(name + "-logs");
            deleteTree(kept);
            if (Files.exists(logs)) {
                try (Stream<Path> paths = Files.walk(logs)) {
                    for (Path path : paths.toList()) {
                        final Path target = kept.resolve(logs.relativize(path).toString());
                        if (Files.isDirectory(path)) {
                            Files.createDirectories(target);
                        } else {
                            Files.copy(path, target);
                        }
                    }
                }
            }
            deleteTree(serverDir);
        } catch (IOException e) {
            // Best effort: the next run deletes it before it starts.
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
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
