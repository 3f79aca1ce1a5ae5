package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A throwaway Redis server on 127.0.0.1 with persistence off, for tests and demos.
 *
 * <p>Uses {@code redis-server} from the PATH when present, otherwise the Linux binary shipped inside
 * the {@code com.github.codemonstur:embedded-redis} jar (extracted once into
 * {@code ~/.cache/hibernate-routing/}). {@link #stop()}/{@link #kill()} followed by {@link #restart()}
 * bring it back on the same port, for fault-injection tests; {@link #snapshot()} and
 * {@link #restartFrom(Path)} bring it back with older data, as a restore from a backup would;
 * {@link #pause()} and {@link #resume()} make it hang with its sockets open and answer again.
 * Thread-safe; failures throw
 * {@link TestkitException} naming the log file. {@link #close()} stops it and deletes its temp directory.
 */
public final class RedisServer implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_GRACE = Duration.ofSeconds(30);

    private final Path workDir;
    private final int port;
    private final ServerProcess process;
    private boolean closed;
    private boolean paused;
    private int snapshots;

    private RedisServer(Path binary, List<String> extraArgs) {
        this.workDir = ServerProcess.createTempDir(null, "hrtk-redis-");
        this.port = Os.freePorts(1)[0];
        // Persistence off: no RDB snapshots, no AOF; the data dir is the temp dir anyway.
        final List<String> command = new ArrayList<>(List.of(
                binary.toString(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                workDir.toString(),
                "--daemonize",
                "no",
                "--logfile",
                ""));
        // Later arguments win: the extra ones may override the defaults above.
        command.addAll(extraArgs);
        this.process = new ServerProcess("redis", command, workDir.resolve("redis.log"), "TERM");
    }

    /**
     * Starts a new server on a free port and waits until it answers PING.
     *
     * @throws TestkitException if no binary is available or the server does not come up
     */
    public static RedisServer start() {
        return start(List.of());
    }

    /**
     * Starts a new server as {@link #start()} does, with {@code extraArgs} appended to its command line
     * ({@code --cluster-enabled yes}, {@code --replicaof 127.0.0.1 6379}, TLS options...); they override
     * the defaults, except that the plain-text {@link #port()} must stay open for the readiness check.
     */
    public static RedisServer start(List<String> extraArgs) {
        RedisServer server = new RedisServer(binary(), extraArgs);
        try {
            server.restart();
            return server;
        } catch (RuntimeException | Error e) {
            server.close();
            throw e;
        }
    }

    /** The TCP port (fixed for the server's life, also across {@link #restart()}). */
    public int port() {
        return port;
    }

    /** The host, always 127.0.0.1. */
    public String host() {
        return "127.0.0.1";
    }

    /** {@code redis://127.0.0.1:port}. */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** The server's log file. */
    public Path logFile() {
        return process.logFile();
    }

    /** True while the server process runs. */
    public boolean isRunning() {
        return process.isAlive();
    }

    /**
     * Starts the server again on the same port after {@link #stop()} or {@link #kill()} (stopping it
     * first if it runs) and waits until it answers PING. Data is not kept.
     */
    public synchronized void restart() {
        if (closed) {
            throw new IllegalStateException("The Redis server is closed");
        }
        resume();
        process.stop(STOP_GRACE);
        process.start();
        process.awaitReady(
                "Redis on port " + port,
                this::ping,
                System.nanoTime() + START_TIMEOUT.toNanos(),
                "answer PING within 30s");
    }

    /**
     * Saves the data set now ({@code SAVE}) and returns a copy of the RDB file, for
     * {@link #restartFrom(Path)}. The server keeps running, and {@link #restart()} still starts it
     * empty. The copy lives in {@link #workDir()} and goes with it.
     *
     * @throws TestkitException if the server does not answer {@code SAVE} with {@code +OK}
     */
    public synchronized Path snapshot() {
        final String reply = command("SAVE", 30_000);
        if (!"+OK".equals(reply)) {
            throw new TestkitException("Redis on port " + port + " answered SAVE with " + reply + "; see " + logFile());
        }
        final Path copy = workDir.resolve("snapshot-" + ++snapshots + ".rdb");
        try {
            Files.move(dumpFile(), copy, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not keep the RDB file of " + this, e);
        }
        return copy;
    }

    /**
     * Restarts the server from an RDB file made by {@link #snapshot()}, as a restore from a backup
     * (or a failover to a replica that was that far behind) would: a new process, with a new
     * {@code run_id}, holding the data as it was then, less the keys whose expiry time has passed.
     * Waits until it answers PING, which it does once the file is loaded. A later {@link #restart()}
     * starts empty again.
     */
    public synchronized void restartFrom(Path snapshot) {
        if (closed) {
            throw new IllegalStateException("The Redis server is closed");
        }
        resume();
        process.stop(STOP_GRACE);
        try {
            Files.copy(snapshot, dumpFile(), StandardCopyOption.REPLACE_EXISTING);
            process.start();
            process.awaitReady(
                    "Redis on port " + port + " (from " + snapshot.getFileName() + ")",
                    this::ping,
                    System.nanoTime() + START_TIMEOUT.toNanos(),
                    "answer PING within 30s");
        } catch (IOException e) {
            throw new UncheckedIOException("Could not restore " + snapshot + " for " + this, e);
        } finally {
            try {
                Files.deleteIfExists(dumpFile());
            } catch (IOException e) {
                throw new UncheckedIOException("Could not remove the restored RDB file of " + this, e);
            }
        }
    }

    /** Where Redis reads and writes its RDB file: {@code dump.rdb} in its working directory. */
    private Path dumpFile() {
        return workDir.resolve("dump.rdb");
    }

    /** Stops the server (SIGTERM, SIGKILL after 30 s); the port then refuses connections. */
    public synchronized void stop() {
        resume();
        process.stop(STOP_GRACE);
    }

    /**
     * Freezes the server process (SIGSTOP), as a hung host, a long pause or a network partition
     * that drops packets would: its sockets stay open and the kernel still accepts new connections,
     * but nothing is answered until {@link #resume()}. Stopping or closing resumes it first.
     */
    public synchronized void pause() {
        process.signal("STOP");
        paused = true;
    }

    /** Lets a server frozen by {@link #pause()} run again (SIGCONT); it answers what it was sent meanwhile. No-op if not paused. */
    public synchronized void resume() {
        if (paused) {
            process.signal("CONT");
            paused = false;
        }
    }

    /** SIGKILLs the server, like a crash. */
    public synchronized void kill() {
        process.killTree();
        paused = false;
    }

    /** Stops the server and deletes its temp directory; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        resume();
        process.stop(STOP_GRACE);
        ServerProcess.deleteTempDir(workDir);
    }

    /** The server's temp directory (log and working dir). */
    public Path workDir() {
        return workDir;
    }

    @Override
    public String toString() {
        return "RedisServer[" + uri() + "]";
    }

    /** Sends a raw RESP PING; true on "+PONG". */
    private boolean ping() {
        return "+PONG".equals(command("PING", 1000));
    }

    /** A free TCP port on 127.0.0.1, for a second listener such as {@code --tls-port}. */
    public static int freePort() {
        return Os.freePorts(1)[0];
    }

    /**
     * Sends one inline command to this server and returns its reply as text: a status, error or
     * integer line as sent ({@code +OK}, {@code -ERR ...}, {@code :1}), a bulk string's content, or
     * an array's elements one per line; {@code null} if the server cannot be reached.
     */
    public String query(String command) {
        return query(port, command);
    }

    /** {@link #query(String)} on any Redis (or Sentinel) on 127.0.0.1 at {@code port}. */
    static String query(int port, String command) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write((command + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return reply(socket.getInputStream());
        } catch (IOException e) {
            return null;
        }
    }

    private static String reply(InputStream in) throws IOException {
        final String line = line(in);
        if (line.startsWith("$")) {
            final int length = Integer.parseInt(line.substring(1));
            if (length < 0) {
                return "";
            }
            final byte[] data = in.readNBytes(length + 2);
            return new String(data, 0, length, StandardCharsets.UTF_8);
        }
        if (line.startsWith("*")) {
            final int count = Integer.parseInt(line.substring(1));
            final List<String> items = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                items.add(reply(in));
            }
            return String.join("\n", items);
        }
        return line;
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c == -1) {
                throw new IOException("connection closed");
            }
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }

    /** Sends one inline command and returns the first line of the reply, or {@code null} if the server cannot be reached. */
    private String command(String command, int timeoutMillis) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            socket.setSoTimeout(timeoutMillis);
            OutputStream out = socket.getOutputStream();
            out.write((command + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        } catch (IOException e) {
            return null;
        }
    }

    static Path binary() {
        return Os.which("redis-server").orElseGet(RedisServer::embeddedBinary);
    }

    private static Path embeddedBinary() {
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        String name = arch.equals("aarch64") || arch.equals("arm64")
                ? "redis-server-6.2.7-linux-arm64"
                : "redis-server-6.2.6-v5-linux-amd64";
        URL url = RedisServer.class.getClassLoader().getResource(name);
        if (url == null) {
            throw new TestkitException("No 'redis-server' on the PATH and no " + name
                    + " on the class path (add com.github.codemonstur:embedded-redis or install redis-server)");
        }
        Path target = Os.cacheDir().resolve(name);
        if (Files.isExecutable(target)) {
            return target;
        }
        try {
            Path tmp = Files.createTempFile(target.getParent(), name, ".tmp");
            try (InputStream in = url.openStream()) {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            }
            if (!tmp.toFile().setExecutable(true, false)) {
                throw new IOException("cannot make " + tmp + " executable");
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("Could not extract " + name + " into " + target.getParent(), e);
        }
    }
}
