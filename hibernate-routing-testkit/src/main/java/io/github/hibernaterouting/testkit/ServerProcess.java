package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One long-running server process (a postmaster or a redis-server) whose output goes to a log file,
 * and the lifecycle both kinds of server share: start, wait until ready, stop with a grace period,
 * kill, and the temp directory the server lives in.
 *
 * <p>Every started process is tracked by a JVM shutdown hook that SIGKILLs it (and its children) and
 * deletes the temp directories made by {@link #createTempDir}, the last resort when a test run is
 * aborted. Thread-safe.
 */
final class ServerProcess {
    private static final Set<ServerProcess> LIVE = ConcurrentHashMap.newKeySet();
    private static final Set<Path> TEMP_DIRS = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ServerProcess::reapAll, "hibernate-routing-testkit-reaper"));
    }

    private final String name;
    private final List<String> command;
    private final Path logFile;
    private final String stopSignal;
    private Process process;

    /** A process that {@link #stop(Duration)} ends with {@code stopSignal} ("INT" for PostgreSQL's fast shutdown, "TERM"). */
    ServerProcess(String name, List<String> command, Path logFile, String stopSignal) {
        this.name = name;
        this.stopSignal = stopSignal;
        this.command = List.copyOf(command);
        this.logFile = logFile;
    }

    /**
     * A new temp directory for a server (see {@link Os#createTempDir}), which the shutdown hook deletes
     * if its owner is not closed.
     */
    static Path createTempDir(Path parent, String prefix) {
        Path dir = Os.createTempDir(parent, prefix);
        TEMP_DIRS.add(dir);
        return dir;
    }

    /** Deletes a directory made by {@link #createTempDir}; the shutdown hook forgets it either way. */
    static void deleteTempDir(Path dir) {
        try {
            Os.deleteTree(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not delete " + dir, e);
        } finally {
            TEMP_DIRS.remove(dir);
        }
    }

    /**
     * Shutdown hook: asks every live server to stop (graceful, so PostgreSQL releases its shared
     * memory), then SIGKILLs what is left after 5 s. Owners' own hooks may run concurrently.
     */
    private static void reapAll() {
        for (ServerProcess p : LIVE) {
            p.requestStop();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (ServerProcess p : LIVE) {
            if (!p.awaitExit(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))) {
                p.killTree();
            }
        }
        for (Path dir : TEMP_DIRS) {
            try {
                Os.deleteTree(dir);
            } catch (IOException | RuntimeException ignored) {
                // Best effort while the JVM exits.
            }
        }
    }

    /** Starts the process; a no-op when it is already running. */
    synchronized void start() {
        if (isAlive()) {
            return;
        }
        try {
            Files.createDirectories(logFile.getParent());
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
            process = builder.start();
            process.getOutputStream().close();
            LIVE.add(this);
        } catch (IOException e) {
            throw new TestkitException(
                    "Could not start " + name + " (" + String.join(" ", command) + "): " + e.getMessage(), e);
        }
    }

    /**
     * Waits, polling every ~2 ms, until the readiness probe {@code ready} says the server accepts
     * connections.
     *
     * @param server how a failure names the server, e.g. "PostgreSQL primary (127.0.0.1:5432)"
     * @param deadline the {@link System#nanoTime()} to give up at
     * @param readiness what the server did not do by then, e.g. "become ready within PT1M"
     * @throws TestkitException naming the log file and quoting its last lines if the process exits
     *         first or the deadline passes
     */
    void awaitReady(String server, BooleanSupplier ready, long deadline, String readiness) {
        while (true) {
            if (!isAlive()) {
                throw new TestkitException(failure(server + " failed to start (process exited)"));
            }
            if (ready.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new TestkitException(failure(server + " did not " + readiness));
            }
            Os.pause();
        }
    }

    synchronized boolean isAlive() {
        return process != null && process.isAlive();
    }

    synchronized long pid() {
        if (process == null) {
            throw new IllegalStateException(name + " was never started");
        }
        return process.pid();
    }

    Path logFile() {
        return logFile;
    }

    /** Sends a signal by name (e.g. "INT") with kill(1); Java itself can only send TERM and KILL. */
    void signal(String signal) {
        Process p;
        synchronized (this) {
            p = process;
        }
        if (p == null || !p.isAlive()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid()))
                    .redirectErrorStream(true)
                    .start();
            kill.getInputStream().readAllBytes();
            kill.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not signal " + name, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sends SIGTERM. */
    void terminate() {
        Process p;
        synchronized (this) {
            p = process;
        }
        if (p != null) {
            p.destroy();
        }
    }

    /** Waits until the process has exited; true if it did within the timeout. */
    boolean awaitExit(Duration timeout) {
        Process p;
        synchronized (this) {
            p = process;
        }
        if (p == null) {
            return true;
        }
        try {
            boolean exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (exited) {
                LIVE.remove(this);
            }
            return exited;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Sends the stop signal without waiting. */
    void requestStop() {
        if ("TERM".equals(stopSignal)) {
            terminate();
        } else {
            signal(stopSignal);
        }
    }

    /** Sends the stop signal, waits up to {@code grace} for the exit, then SIGKILLs the whole tree. */
    void stop(Duration grace) {
        if (!isAlive()) {
            LIVE.remove(this);
            return;
        }
        requestStop();
        if (!awaitExit(grace)) {
            killTree();
        }
    }

    /**
     * SIGKILLs the process and every descendant, then waits for them to be gone, so a restart on the
     * same data directory does not find shared memory still attached by orphaned children.
     */
    void killTree() {
        Process p;
        synchronized (this) {
            p = process;
        }
        if (p == null) {
            return;
        }
        List<ProcessHandle> tree = new ArrayList<>(p.descendants().toList());
        p.destroyForcibly();
        tree.forEach(ProcessHandle::destroyForcibly);
        tree.add(p.toHandle());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ProcessHandle h : tree) {
            while (h.isAlive() && System.nanoTime() < deadline) {
                h.destroyForcibly();
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        awaitExit(Duration.ofSeconds(1));
    }

    /** The last {@code lines} lines of the log file, or a note why there are none. */
    String logTail(int lines) {
        return tail(logFile, lines);
    }

    static String tail(Path file, int lines) {
        try {
            if (!Files.exists(file)) {
                return "(no log file)";
            }
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | RuntimeException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    /** A message for a failure of this server: what failed, where the log is, and its tail. */
    String failure(String what) {
        return failure(what, logFile);
    }

    static String failure(String what, Path logFile) {
        return what + "\n  log file: " + logFile + "\n  last lines:\n"
                + tail(logFile, 20).indent(4).stripTrailing();
    }

    /**
     * Runs a short command (like initdb) to completion with output appended to {@code logFile}.
     *
     * @throws TestkitException naming the log file if it fails or exceeds the timeout
     */
    static void run(String what, List<String> command, Path logFile, Duration timeout) {
        ServerProcess p = new ServerProcess(what, command, logFile, "TERM");
        p.start();
        if (!p.awaitExit(timeout)) {
            p.killTree();
            throw new TestkitException(failure(what + " did not finish within " + timeout, logFile));
        }
        int exit;
        synchronized (p) {
            exit = p.process.exitValue();
        }
        if (exit != 0) {
            throw new TestkitException(
                    failure(what + " failed with exit code " + exit + " (" + String.join(" ", command) + ")", logFile));
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
