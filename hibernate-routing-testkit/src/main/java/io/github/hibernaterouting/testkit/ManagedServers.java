package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The PostgreSQL servers of a cluster the kit started: one {@link ServerProcess} per node in the
 * cluster's temp directory, started, stopped and killed on request, and waited for until they accept
 * connections and the standbys stream. {@link Provisioning} fills it; callers serialize the
 * lifecycle methods.
 */
final class ManagedServers implements ServerControl {
    private static final Duration STOP_GRACE = Duration.ofSeconds(60);

    private final Duration startTimeout;
    private final List<Node> nodes = new ArrayList<>();
    private final Map<Node, ServerProcess> processes = new LinkedHashMap<>();
    private Path workDir;
    private boolean closed;

    /** {@code startTimeout}: per server start and per "standby streams" wait. */
    ManagedServers(Duration startTimeout) {
        this.startTimeout = startTimeout;
    }

    /** Creates the servers' temp directory under {@code baseDir} (null: /dev/shm, else java.io.tmpdir). */
    Path createWorkDir(Path baseDir) {
        workDir = ServerProcess.createTempDir(baseDir, "hrtk-");
        return workDir;
    }

    /** Adds a node whose postmaster runs {@code command}; the first node added is the primary. */
    void add(Node node, List<String> command) {
        nodes.add(node);
        processes.put(node, new ServerProcess(node.name(), command, node.logFile(), "INT"));
    }

    /** The nodes, primary first. */
    List<Node> nodes() {
        return List.copyOf(nodes);
    }

    private Node primary() {
        return nodes.get(0);
    }

    private List<Node> standbys() {
        return nodes.subList(1, nodes.size());
    }

    private ServerProcess process(Node node) {
        ServerProcess process = processes.get(node);
        if (process == null) {
            throw PostgresCluster.notAMember(node);
        }
        return process;
    }

    /** Starts the processes together, then waits for each to accept connections. */
    void startAndAwaitReady(List<Node> toStart) {
        for (Node node : toStart) {
            processes.get(node).start();
        }
        long deadline = System.nanoTime() + startTimeout.toNanos();
        for (Node node : toStart) {
            awaitReady(node, deadline);
        }
    }

    /** Waits until postmaster.pid names our process with status "ready" (primary) or "standby". */
    private void awaitReady(Node node, long deadline) {
        ServerProcess process = processes.get(node);
        Path pidFile = node.dataDir().resolve("postmaster.pid");
        String pid = Long.toString(process.pid());
        process.awaitReady(
                "PostgreSQL " + node,
                () -> pidFileSaysReady(pidFile, pid),
                deadline,
                "become ready within " + startTimeout);
    }

    private static boolean pidFileSaysReady(Path pidFile, String pid) {
        try {
            List<String> lines = Files.exists(pidFile) ? Files.readAllLines(pidFile) : List.of();
            if (lines.size() >= 8 && lines.get(0).trim().equals(pid)) {
                String status = lines.get(7).trim();
                return status.equals("ready") || status.equals("standby");
            }
        } catch (IOException e) {
            // Read while postgres rewrites the file: retry.
        }
        return false;
    }

    /** Waits until the primary's pg_stat_replication shows each standby as streaming. */
    void awaitStreaming(List<Node> expected) {
        if (expected.isEmpty()) {
            return;
        }
        Node primary = primary();
        long deadline = System.nanoTime() + startTimeout.toNanos();
        Set<String> streaming = new HashSet<>();
        Connection c = null;
        try {
            while (true) {
                for (Node standby : expected) {
                    if (!processes.get(standby).isAlive()) {
                        throw new TestkitException(processes
                                .get(standby)
                                .failure("PostgreSQL " + standby + " exited while connecting to the primary"));
                    }
                }
                try {
                    if (c == null) {
                        c = adminConnection(primary);
                    }
                    streaming.clear();
                    try (Statement s = c.createStatement();
                            ResultSet rs = s.executeQuery(
                                    "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'")) {
                        while (rs.next()) {
                            streaming.add(rs.getString(1));
                        }
                    }
                    if (expected.stream().allMatch(n -> streaming.contains(n.name()))) {
                        return;
                    }
                } catch (SQLException | TestkitException e) {
                    Jdbc.closeQuietly(c);
                    c = null;
                }
                if (System.nanoTime() > deadline) {
                    Node missing = expected.stream()
                            .filter(n -> !streaming.contains(n.name()))
                            .findFirst()
                            .orElseThrow();
                    throw new TestkitException(ServerProcess.failure(
                            "Standby " + missing + " is not streaming from " + primary + " after " + startTimeout
                                    + " (streaming: " + streaming + ")",
                            missing.logFile()));
                }
                Os.pause();
            }
        } finally {
            Jdbc.closeQuietly(c);
        }
    }

    @Override
    public void requireControl(String operation) {
        if (closed) {
            throw new IllegalStateException("The cluster is closed");
        }
    }

    @Override
    public boolean isRunning(Node node) {
        return process(node).isAlive();
    }

    @Override
    public void stop(Node node) {
        process(node).stop(STOP_GRACE);
    }

    @Override
    public void kill(Node node) {
        process(node).killTree();
    }

    @Override
    public void start(Node node, Predicate<Node> replayPaused) {
        if (process(node).isAlive()) {
            return;
        }
        startAndAwaitReady(List.of(node));
        if (!node.isPrimary()) {
            if (processes.get(primary()).isAlive()) {
                awaitStreaming(List.of(node));
            }
        } else {
            // A paused standby does not restart its WAL receiver until resumed, so don't wait for it.
            awaitStreaming(standbys().stream()
                    .filter(s -> processes.get(s).isAlive() && !replayPaused.test(s))
                    .collect(Collectors.toList()));
        }
    }

    @Override
    public Connection adminConnection(Node node) throws SQLException {
        return Jdbc.open(node, null, Provisioning.ADMIN_USER, Provisioning.ADMIN_PASSWORD);
    }

    @Override
    public Path workDir() {
        return workDir;
    }

    /**
     * Stops every server (fast shutdown for all at once, SIGKILL after a grace period) and deletes
     * the temp directory. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ServerProcess p : processes.values()) {
            if (p.isAlive()) {
                p.requestStop(); // all at once: shutting down in parallel is faster
            }
        }
        for (ServerProcess p : processes.values()) {
            p.stop(STOP_GRACE);
        }
        nodes.stream().filter(n -> n.dataDir() != null).forEach(ManagedServers::removeSharedMemoryOfKilledServer);
        if (workDir != null) {
            ServerProcess.deleteTempDir(workDir);
        }
    }

    /**
     * A clean shutdown removes postmaster.pid; if it is still there the server was killed and its
     * small System V segment (key/id on line 7) outlives it: remove it, as a restart would have.
     */
    private static void removeSharedMemoryOfKilledServer(Node node) {
        try {
            List<String> lines = Files.readAllLines(node.dataDir().resolve("postmaster.pid"));
            String[] keyAndId = lines.size() > 6 ? lines.get(6).trim().split("\\s+") : new String[0];
            if (keyAndId.length == 2) {
                ServerProcess.run(
                        "ipcrm for " + node.name(),
                        List.of("ipcrm", "-m", keyAndId[1]),
                        node.logFile(),
                        Duration.ofSeconds(10));
            }
        } catch (IOException | RuntimeException e) {
            // No pid file (clean shutdown), or ipcrm failed: nothing more we can do.
        }
    }
}
