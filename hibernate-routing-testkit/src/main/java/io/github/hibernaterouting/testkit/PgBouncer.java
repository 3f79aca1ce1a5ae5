package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A real PgBouncer ({@code pgbouncer} on the PATH, Debian's package) in front of one address (a
 * server, or a load balancer such as {@link TcpBalancer}), in the pool mode a test asks for, with
 * clients trusted and the cluster's user and password for the servers, on 127.0.0.1. As root it runs in a user
 * namespace, as PostgreSQL does here (PgBouncer refuses to run as root). Use {@link #available()}
 * to skip a test on a machine without PgBouncer.
 *
 * <p>PgBouncer before 1.21 does not keep server-side prepared statements in transaction mode:
 * a pgjdbc URL through it needs {@code prepareThreshold=0} ({@link #jdbcUrl}).
 */
public final class PgBouncer implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);

    /** PgBouncer's {@code pool_mode}. */
    public enum PoolMode {
        SESSION,
        TRANSACTION,
        STATEMENT
    }

    private final Path workDir;
    private final int port;
    private final String database;
    private final ServerProcess process;
    private boolean closed;

    private PgBouncer(
            Path binary, PoolMode mode, int targetPort, String database, String user, String password, int poolSize) {
        this.workDir = ServerProcess.createTempDir(null, "hrtk-pgbouncer-");
        this.port = Os.freePorts(1)[0];
        this.database = database;
        final String config = "[databases]\n"
                + database + " = host=127.0.0.1 port=" + targetPort + " dbname=" + database + "\n"
                + "[pgbouncer]\n"
                + "listen_addr = 127.0.0.1\n"
                + "listen_port = " + port + "\n"
                + "unix_socket_dir =\n"
                + "auth_type = trust\n"
                + "auth_file = " + workDir.resolve("users.txt") + "\n"
                + "pool_mode = " + mode.name().toLowerCase(Locale.ROOT) + "\n"
                + "default_pool_size = " + poolSize + "\n"
                + "max_client_conn = 200\n"
                // pgjdbc sends it at start-up; PgBouncer refuses parameters it does not know.
                + "ignore_startup_parameters = extra_float_digits,options\n"
                + "pidfile = " + workDir.resolve("pgbouncer.pid") + "\n";
        try {
            Files.writeString(workDir.resolve("pgbouncer.ini"), config, StandardCharsets.UTF_8);
            // The servers ask for the password (scram-sha-256 on TCP); PgBouncer logs in with it. Clients are trusted.
            Files.writeString(
                    workDir.resolve("users.txt"), "\"" + user + "\" \"" + password + "\"\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        final List<String> command = new ArrayList<>(
                List.of(binary.toString(), workDir.resolve("pgbouncer.ini").toString()));
        this.process =
                new ServerProcess("pgbouncer", Os.unprivileged(command), workDir.resolve("pgbouncer.log"), "INT");
    }

    /** Whether {@code pgbouncer} is on the PATH. */
    public static boolean available() {
        return binary().isPresent();
    }

    /**
     * Starts PgBouncer on a free port of 127.0.0.1 in front of {@code 127.0.0.1:targetPort}, for
     * {@code cluster}'s database and user, and waits until it accepts connections.
     *
     * @param poolSize PgBouncer's {@code default_pool_size}: server connections per database and user
     * @throws TestkitException if {@code pgbouncer} is not on the PATH or does not come up
     */
    public static PgBouncer start(PoolMode mode, int targetPort, PostgresCluster cluster, int poolSize) {
        final Path binary = binary().orElseThrow(() ->
                new TestkitException("pgbouncer is not on the PATH: install it (Debian: apt-get install pgbouncer)"));
        final PgBouncer bouncer = new PgBouncer(
                binary, mode, targetPort, cluster.database(), cluster.user(), cluster.password(), poolSize);
        bouncer.process.start();
        bouncer.process.awaitReady(
                "PgBouncer (127.0.0.1:" + bouncer.port + ")",
                () -> Os.accepts(bouncer.port),
                System.nanoTime() + START_TIMEOUT.toNanos(),
                "accept connections within " + START_TIMEOUT);
        return bouncer;
    }

    /** The port it listens on, on 127.0.0.1. */
    public int port() {
        return port;
    }

    /** A pgjdbc URL through it, with {@code prepareThreshold=0} (see the class comment). */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?prepareThreshold=0";
    }

    /** Its log. */
    public Path logFile() {
        return workDir.resolve("pgbouncer.log");
    }

    /** Stops PgBouncer and deletes its temp directory; idempotent. */
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
        return "PgBouncer(127.0.0.1:" + port + ")";
    }

    private static Optional<Path> binary() {
        return Os.systemBinary("pgbouncer");
    }
}
