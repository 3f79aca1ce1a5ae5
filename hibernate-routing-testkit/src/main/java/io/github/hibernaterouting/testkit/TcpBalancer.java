package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A real HAProxy ({@code haproxy} on the PATH, Debian's package) balancing TCP connections
 * round-robin over servers, as the load balancer in front of a set of standbys is in production:
 * each new connection goes to the next server. Only loopback addresses. Use {@link #available()}
 * to skip a test on a machine without HAProxy.
 */
public final class TcpBalancer implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);

    private final Path workDir;
    private final int port;
    private final ServerProcess process;
    private boolean closed;

    private TcpBalancer(Path binary, List<Node> servers) {
        this.workDir = ServerProcess.createTempDir(null, "hrtk-haproxy-");
        this.port = Os.freePorts(1)[0];
        final StringBuilder config = new StringBuilder()
                .append("global\n  maxconn 256\n")
                .append("defaults\n  mode tcp\n  timeout connect 5s\n  timeout client 1h\n  timeout server 1h\n")
                .append("listen standbys\n  bind 127.0.0.1:")
                .append(port)
                .append("\n  balance roundrobin\n");
        for (int i = 0; i < servers.size(); i++) {
            config.append("  server s")
                    .append(i + 1)
                    .append(" 127.0.0.1:")
                    .append(servers.get(i).port())
                    .append('\n');
        }
        final Path configFile = workDir.resolve("haproxy.cfg");
        try {
            Files.writeString(configFile, config.toString(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // -db: stay in the foreground, logs to the console.
        this.process = new ServerProcess(
                "haproxy",
                List.of(binary.toString(), "-db", "-f", configFile.toString()),
                workDir.resolve("haproxy.log"),
                "TERM");
    }

    /** Whether {@code haproxy} is on the PATH. */
    public static boolean available() {
        return binary().isPresent();
    }

    /**
     * Starts HAProxy on a free port of 127.0.0.1, round-robin over {@code servers}, and waits until it
     * accepts connections.
     *
     * @throws TestkitException if {@code haproxy} is not on the PATH or does not come up
     */
    public static TcpBalancer start(List<Node> servers) {
        final Path binary = binary().orElseThrow(() ->
                new TestkitException("haproxy is not on the PATH: install it (Debian: apt-get install haproxy)"));
        final TcpBalancer balancer = new TcpBalancer(binary, servers);
        balancer.process.start();
        balancer.process.awaitReady(
                "HAProxy (127.0.0.1:" + balancer.port + ")",
                () -> Os.accepts(balancer.port),
                System.nanoTime() + START_TIMEOUT.toNanos(),
                "accept connections within " + START_TIMEOUT);
        return balancer;
    }

    /** The port it listens on, on 127.0.0.1. */
    public int port() {
        return port;
    }

    /** Its log (HAProxy's console output). */
    public Path logFile() {
        return workDir.resolve("haproxy.log");
    }

    /** Stops HAProxy and deletes its temp directory; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        process.stop(STOP_GRACE);
        ServerProcess.deleteTempDir(workDir);
    }

    @Override
    public String toString() {
        return "HAProxy(127.0.0.1:" + port + ")";
    }

    private static Optional<Path> binary() {
        return Os.which("haproxy")
                .or(() -> Optional.of(Path.of("/usr/sbin/haproxy")).filter(Files::isExecutable));
    }
}
