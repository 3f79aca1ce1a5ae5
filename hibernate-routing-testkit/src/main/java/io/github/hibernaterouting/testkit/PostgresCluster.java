package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

import org.postgresql.Driver;
import org.postgresql.replication.LogSequenceNumber;

/**
 * A real PostgreSQL primary with N streaming hot standbys on 127.0.0.1, for tests and demos.
 *
 * <p>{@link #builder()} configures and {@link Builder#start()} starts it: {@code initdb} in a temp
 * directory (under /dev/shm when available), one replication slot per standby, standbys made from
 * a file copy of the cleanly stopped primary, and {@code start()} returns only once every standby
 * streams. {@link #close()} stops every process the cluster started and deletes its directory; a
 * JVM shutdown hook does the same if a test run is aborted.
 *
 * <p>Controls for deterministic tests: {@link #pauseReplay(Node)} / {@link #resumeReplay(Node)} to
 * create lag on demand, {@link #awaitReplay(Node, LogSequenceNumber, Duration)} to wait for it to
 * go away, and {@link #stop(Node)} / {@link #kill(Node)} / {@link #start(Node)} for outages.
 *
 * <p>Thread-safety: start/stop/kill/restart/close are serialized on the cluster; the query methods
 * (LSNs, pause state, connections) may be called concurrently. Failures throw
 * {@link TestkitException} naming the node and its log file, or {@link java.sql.SQLException}
 * wrapped in a {@code TestkitException} for control queries.
 */
public final class PostgresCluster implements AutoCloseable {
    static final String ADMIN_USER = "postgres";
    private static final String ADMIN_PASSWORD = "testkit-admin-secret";
    private static final String REPLICATION_USER = "replicator";
    private static final String REPLICATION_PASSWORD = "testkit-replication-secret";
    private static final Duration STOP_GRACE = Duration.ofSeconds(60);

    private final Builder config;
    private final boolean external;
    private final List<Node> nodes = new ArrayList<>();
    private final Map<Node, ServerProcess> processes = new LinkedHashMap<>();
    private final ReplicationControl replication = new ReplicationControl(this);
    private Path workDir;
    private Path binDir;
    private boolean closed;
    private long startupMillis;

    private PostgresCluster(Builder config) {
        this.config = config;
        this.external = config.externalPrimary != null;
    }

    /** A builder with defaults: 2 standbys, database "app", user "app" / "app-secret", Maven binaries. */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures a {@link PostgresCluster}; not thread-safe, use once. */
    public static final class Builder {
        private int standbys = 2;
        private String database = "app";
        private String user = "app";
        private String password = "app-secret";
        private Binaries binaries;
        private final Map<String, String> settings = new LinkedHashMap<>();
        private int primaryPort;
        private Duration startTimeout = Duration.ofSeconds(60);
        private Path baseDir;
        private String externalPrimary;
        private List<String> externalStandbys = List.of();

        private Builder() {
        }

        /** Number of hot standbys (0 or more; default 2). */
        public Builder standbys(int count) {
            if (count < 0) {
                throw new IllegalArgumentException("standbys must be >= 0: " + count);
            }
            this.standbys = count;
            return this;
        }

        /** Name of the database created for the application (default "app"). */
        public Builder database(String name) {
            this.database = requireName(name, "database");
            return this;
        }

        /** Application login role, a non-superuser that owns the database (default "app"). */
        public Builder user(String name) {
            String n = requireName(name, "user");
            if (n.equals(ADMIN_USER) || n.equals(REPLICATION_USER)) {
                throw new IllegalArgumentException("user '" + n + "' is reserved by the test kit");
            }
            this.user = n;
            return this;
        }

        /** Password of the application role (default "app-secret"). */
        public Builder password(String password) {
            this.password = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * Where the server binaries come from. Unset, the system property {@value Binaries#PROPERTY},
         * then the environment variable {@value Binaries#ENV}, then {@link Binaries#MAVEN} decide.
         */
        public Builder binaries(Binaries binaries) {
            this.binaries = Objects.requireNonNull(binaries, "binaries");
            return this;
        }

        /** An extra postgresql.conf setting for every node, applied after the kit's defaults. */
        public Builder serverSetting(String key, String value) {
            settings.put(requireName(key, "setting"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Fixed TCP port for the primary (default 0: a free port); standbys always get free ports. */
        public Builder primaryPort(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port out of range: " + port);
            }
            this.primaryPort = port;
            return this;
        }

        /** How long each server may take to start and each standby to start streaming (default 60 s). */
        public Builder startTimeout(Duration timeout) {
            this.startTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** Parent of the cluster's temp directory (default /dev/shm, else java.io.tmpdir); keep it short. */
        Builder baseDir(Path dir) {
            this.baseDir = dir;
            return this;
        }

        /**
         * Attaches to already-running servers instead of starting any. Start/stop/kill controls then
         * throw {@link UnsupportedOperationException}; pause/resume and LSN queries work over JDBC as
         * {@code user}, which therefore needs the rights to call {@code pg_wal_replay_pause()}.
         */
        public Builder external(String primaryJdbcUrl, List<String> standbyJdbcUrls, String user, String password) {
            this.externalPrimary = Objects.requireNonNull(primaryJdbcUrl, "primaryJdbcUrl");
            this.externalStandbys = List.copyOf(standbyJdbcUrls);
            this.user = Objects.requireNonNull(user, "user");
            this.password = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * Starts (or attaches to) the cluster; returns once every standby is streaming.
         *
         * @throws TestkitException if any step fails; everything started so far is stopped and removed
         */
        public PostgresCluster start() {
            PostgresCluster cluster = new PostgresCluster(this);
            if (cluster.external) {
                cluster.attach();
            } else {
                cluster.startManaged();
            }
            return cluster;
        }

        private static String requireName(String name, String what) {
            if (name == null || !name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new IllegalArgumentException(what + " must be a plain identifier: " + name);
            }
            return name;
        }
    }

    // ---------------------------------------------------------------- start-up

    private void startManaged() {
        long begin = System.nanoTime();
        try {
            binDir = PgBinaries.binDir(config.binaries != null ? config.binaries : Binaries.fromEnvironment());
            workDir = Os.createTempDir(config.baseDir, "hrtk-");
            ServerProcess.registerTempDir(workDir);
            int[] ports = Os.freePorts(config.standbys + 1);
            if (config.primaryPort != 0) {
                ports[0] = config.primaryPort;
            }
            for (int i = 0; i <= config.standbys; i++) {
                String name = i == 0 ? "primary" : "standby" + i;
                Node node = new Node(name, "127.0.0.1", ports[i], config.database, i == 0, workDir.resolve(name),
                        workDir.resolve(name + ".log"), null);
                nodes.add(node);
                processes.put(node, new ServerProcess(name, Os.unprivileged(List.of(binDir.resolve("postgres").toString(), "-D",
                        node.dataDir().toString())), node.logFile(), "INT"));
            }
            Node primary = primary();
            initPrimary(primary);
            startAndAwaitReady(List.of(primary));
            createRolesAndSlots(primary);
            if (config.standbys > 0) {
                // No pg_basebackup in the Maven binaries: copy the cleanly stopped primary instead,
                // which needs no backup label and is consistent by construction.
                processes.get(primary).stop(STOP_GRACE);
                for (Node standby : standbys()) {
                    makeStandby(primary, standby);
                }
                startAndAwaitReady(nodes);
                awaitStreaming(standbys());
            }
            startupMillis = (System.nanoTime() - begin) / 1_000_000;
        } catch (RuntimeException | Error e) {
            try {
                close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** How long {@link Builder#start()} took, in milliseconds (0 for external clusters). */
    public long startupMillis() {
        return startupMillis;
    }

    private void initPrimary(Node primary) {
        Path pwFile = workDir.resolve("pwfile");
        try {
            Files.writeString(pwFile, ADMIN_PASSWORD + "\n");
            ServerProcess.run("initdb for " + primary.name(), Os.unprivileged(List.of(binDir.resolve("initdb").toString(),
                    "-D", primary.dataDir().toString(), "-U", ADMIN_USER, "--pwfile=" + pwFile, "--auth-local=trust",
                    "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")), primary.logFile(), config.startTimeout);
            Files.delete(pwFile);
            Map<String, String> conf = new LinkedHashMap<>();
            conf.put("listen_addresses", "127.0.0.1");
            conf.put("unix_socket_directories", workDir.toString());
            // Throwaway data: skip fsync. synchronous_commit stays on so commit LSNs are real.
            conf.put("fsync", "off");
            conf.put("wal_level", "replica");
            conf.put("max_wal_senders", "16");
            conf.put("max_replication_slots", "16");
            conf.put("wal_keep_size", "128MB");
            conf.put("hot_standby", "on");
            conf.put("hot_standby_feedback", "on");
            // Never cancel standby queries on replay conflicts: tests must not fail randomly with
            // "canceling statement due to conflict with recovery"; a blocked replay shows up as an
            // awaitReplay timeout that names both LSNs instead.
            conf.put("max_standby_streaming_delay", "-1");
            conf.put("max_standby_archive_delay", "-1");
            // Reconnect fast after the primary restarts (default 5 s) and report positions often.
            conf.put("wal_retrieve_retry_interval", "100ms");
            conf.put("wal_receiver_status_interval", "1s");
            conf.put("max_connections", "200");
            conf.put("shared_buffers", "32MB");
            conf.put("huge_pages", "off");
            // Dynamic shared memory as files in the data dir (not /dev/shm/PostgreSQL.*), so even a
            // SIGKILLed server leaves nothing behind once the temp dir is deleted.
            conf.put("dynamic_shared_memory_type", "mmap");
            conf.put("log_destination", "stderr");
            conf.put("logging_collector", "off");
            conf.put("log_line_prefix", "%m [%p] %q%a ");
            conf.putAll(config.settings);
            StringBuilder text = new StringBuilder("\n# hibernate-routing-testkit\n");
            conf.forEach((k, v) -> text.append(k).append(" = '").append(v.replace("'", "''")).append("'\n"));
            // Per-node settings (port, primary_conninfo) live in node.conf, rewritten in each copy.
            text.append("include_if_exists = 'node.conf'\n");
            Files.writeString(primary.dataDir().resolve("postgresql.conf"), text, java.nio.file.StandardOpenOption.APPEND);
            Files.writeString(primary.dataDir().resolve("node.conf"), "port = " + primary.port() + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("Could not configure " + primary.dataDir(), e);
        }
    }

    private void createRolesAndSlots(Node primary) {
        try (Connection c = Jdbc.open(primary, "postgres", ADMIN_USER, ADMIN_PASSWORD); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + config.user + " LOGIN PASSWORD " + Jdbc.literal(config.password));
            // FILE_COPY (PG15+) copies the template's files instead of WAL-logging every block: ~1 s faster.
            String strategy = c.getMetaData().getDatabaseMajorVersion() >= 15 ? " STRATEGY FILE_COPY" : "";
            s.execute("CREATE DATABASE " + config.database + " OWNER " + config.user + strategy);
            s.execute("CREATE ROLE " + REPLICATION_USER + " REPLICATION LOGIN PASSWORD " + Jdbc.literal(REPLICATION_PASSWORD));
            for (Node standby : standbys()) {
                // A slot per standby keeps WAL on the primary while that standby is down or behind.
                s.execute("SELECT pg_create_physical_replication_slot(" + Jdbc.literal(standby.name()) + ", true)");
            }
        } catch (SQLException e) {
            throw new TestkitException(ServerProcess.failure("Could not create roles and slots on " + primary + ": " + e.getMessage(),
                    primary.logFile()), e);
        }
    }

    private void makeStandby(Node primary, Node standby) {
        Path from = primary.dataDir();
        Path to = standby.dataDir();
        try {
            Files.walkFileTree(from, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    // COPY_ATTRIBUTES keeps mode 0700, which postgres insists on for the data directory.
                    Files.copy(dir, to.resolve(from.relativize(dir).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                    // The primary's slots must not exist on the standby (they would pin its WAL forever).
                    return dir.getFileName().toString().equals("pg_replslot") ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    String name = file.getFileName().toString();
                    if (!name.equals("postmaster.pid") && !name.equals("postmaster.opts")) {
                        Files.copy(file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
            Files.writeString(to.resolve("node.conf"), "port = " + standby.port() + "\n"
                    + "primary_conninfo = 'host=127.0.0.1 port=" + primary.port() + " user=" + REPLICATION_USER
                    + " password=" + REPLICATION_PASSWORD + " application_name=" + standby.name() + "'\n"
                    + "primary_slot_name = '" + standby.name() + "'\n");
            Files.createFile(to.resolve("standby.signal"));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not copy " + from + " to " + to, e);
        }
    }

    /** Starts the processes together, then waits for each to accept connections. */
    private void startAndAwaitReady(List<Node> toStart) {
        for (Node node : toStart) {
            processes.get(node).start();
        }
        long deadline = System.nanoTime() + config.startTimeout.toNanos();
        for (Node node : toStart) {
            awaitReady(node, deadline);
        }
    }

    /** Polls postmaster.pid until it names our process with status "ready" (primary) or "standby". */
    private void awaitReady(Node node, long deadline) {
        ServerProcess process = processes.get(node);
        Path pidFile = node.dataDir().resolve("postmaster.pid");
        String pid = Long.toString(process.pid());
        while (true) {
            if (!process.isAlive()) {
                throw new TestkitException(process.failure("PostgreSQL " + node + " failed to start (process exited)"));
            }
            try {
                List<String> lines = Files.exists(pidFile) ? Files.readAllLines(pidFile) : List.of();
                if (lines.size() >= 8 && lines.get(0).trim().equals(pid)) {
                    String status = lines.get(7).trim();
                    if (status.equals("ready") || status.equals("standby")) {
                        return;
                    }
                }
            } catch (IOException e) {
                // Read while postgres rewrites the file: retry.
            }
            if (System.nanoTime() > deadline) {
                throw new TestkitException(process.failure("PostgreSQL " + node + " did not become ready within " + config.startTimeout));
            }
            Os.pause();
        }
    }

    /** Waits until the primary's pg_stat_replication shows each standby as streaming. */
    private void awaitStreaming(List<Node> expected) {
        if (expected.isEmpty()) {
            return;
        }
        Node primary = primary();
        long deadline = System.nanoTime() + config.startTimeout.toNanos();
        Set<String> streaming = new HashSet<>();
        Connection c = null;
        try {
            while (true) {
                for (Node standby : expected) {
                    if (!processes.get(standby).isAlive()) {
                        throw new TestkitException(processes.get(standby).failure("PostgreSQL " + standby + " exited while connecting to the primary"));
                    }
                }
                try {
                    if (c == null) {
                        c = adminConnection(primary);
                    }
                    streaming.clear();
                    try (Statement s = c.createStatement();
                         ResultSet rs = s.executeQuery("SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'")) {
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
                    Node missing = expected.stream().filter(n -> !streaming.contains(n.name())).findFirst().orElseThrow();
                    throw new TestkitException(ServerProcess.failure("Standby " + missing + " is not streaming from " + primary
                            + " after " + config.startTimeout + " (streaming: " + streaming + ")", missing.logFile()));
                }
                Os.pause();
            }
        } finally {
            Jdbc.closeQuietly(c);
        }
    }

    private void attach() {
        List<String> urls = new ArrayList<>();
        urls.add(config.externalPrimary);
        urls.addAll(config.externalStandbys);
        for (int i = 0; i < urls.size(); i++) {
            Properties p = Driver.parseURL(urls.get(i), null);
            if (p == null) {
                throw new IllegalArgumentException("Not a PostgreSQL JDBC URL: " + urls.get(i));
            }
            String host = p.getProperty("PGHOST", "localhost").split(",")[0];
            int port = Integer.parseInt(p.getProperty("PGPORT", "5432").split(",")[0]);
            nodes.add(new Node(i == 0 ? "primary" : "standby" + i, host, port, p.getProperty("PGDBNAME", ""), i == 0, null, null, urls.get(i)));
        }
        for (Node node : nodes) {
            try (Connection c = connect(node); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_is_in_recovery()")) {
                rs.next();
                if (rs.getBoolean(1) == node.isPrimary()) {
                    throw new TestkitException("External " + node + " at " + node.jdbcUrl() + (node.isPrimary()
                            ? " is in recovery, but was given as the primary" : " is not in recovery, but was given as a standby"));
                }
            } catch (SQLException e) {
                throw new TestkitException("Cannot connect to external " + node + " at " + node.jdbcUrl() + ": " + e.getMessage(), e);
            }
        }
    }

    // ---------------------------------------------------------------- accessors

    /** The primary. */
    public Node primary() {
        return nodes.get(0);
    }

    /** The standbys in order (standby1 first); empty when built with {@code standbys(0)}. */
    public List<Node> standbys() {
        return List.copyOf(nodes.subList(1, nodes.size()));
    }

    /** The standby with the given 1-based number ({@code standby(1)} is "standby1"). */
    public Node standby(int number) {
        if (number < 1 || number >= nodes.size()) {
            throw new IllegalArgumentException("No standby" + number + "; this cluster has " + (nodes.size() - 1) + " standbys");
        }
        return nodes.get(number);
    }

    /** All nodes, primary first. */
    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /** The application role. */
    public String user() {
        return config.user;
    }

    /** The application role's password. */
    public String password() {
        return config.password;
    }

    /** The application database. */
    public String database() {
        return config.database;
    }

    /**
     * The persistence-unit properties that point hibernate-routing at this cluster: the primary as
     * {@code jakarta.persistence.jdbc.url} with user and password, and every standby in
     * {@code hibernate.routing.replica_urls}. A new mutable map; add your own settings to it.
     */
    public Map<String, Object> persistenceProperties() {
        Map<String, Object> properties = new HashMap<>();
        properties.put("jakarta.persistence.jdbc.url", primary().jdbcUrl());
        properties.put("jakarta.persistence.jdbc.user", user());
        properties.put("jakarta.persistence.jdbc.password", password());
        properties.put("hibernate.routing.replica_urls",
                standbys().stream().map(Node::jdbcUrl).collect(Collectors.joining(",")));
        return properties;
    }

    /**
     * The node listening on {@code port}, e.g. from {@code SELECT inet_server_port()}.
     *
     * @throws IllegalArgumentException if no node listens there
     */
    public Node nodeForPort(int port) {
        return nodes.stream().filter(n -> n.port() == port).findFirst().orElseThrow(() -> new IllegalArgumentException(
                "No node listens on port " + port + "; nodes: " + nodes));
    }

    /** A new connection to {@code node}'s application database as the application role; the caller closes it. */
    public Connection connect(Node node) throws SQLException {
        return Jdbc.open(node, null, config.user, config.password);
    }

    /**
     * A new superuser connection to {@code node}'s application database (for an external cluster:
     * as the configured user); the caller closes it.
     */
    public Connection adminConnection(Node node) throws SQLException {
        return external ? connect(node) : Jdbc.open(node, null, ADMIN_USER, ADMIN_PASSWORD);
    }

    // ---------------------------------------------------------------- replication controls

    /**
     * Pauses WAL replay on a standby and returns once it is really paused
     * ({@code pg_get_wal_replay_pause_state() = 'paused'}, PostgreSQL 14+). The pause only takes
     * effect at the next WAL record, so this makes the primary write one ({@code txid_current()}).
     * From then on the standby receives but does not apply WAL: rows committed later are invisible there.
     */
    public void pauseReplay(Node standby) {
        replication.pause(requireStandby(standby));
    }

    /** Resumes WAL replay on a standby (a no-op if it is not paused). */
    public void resumeReplay(Node standby) {
        replication.resume(requireStandby(standby));
    }

    /** True if replay on the standby is paused or a pause was requested. */
    public boolean isReplayPaused(Node standby) {
        return replication.isPaused(requireStandby(standby));
    }

    /** Resumes replay on every running standby. */
    public void resumeAll() {
        replication.resumeAll();
    }

    /** The primary's {@code pg_current_wal_lsn()}: capture it right after a commit to wait for that commit. */
    public LogSequenceNumber currentWalLsn() {
        return replication.currentWalLsn();
    }

    /** The standby's {@code pg_last_wal_replay_lsn()}: WAL up to here is visible to its queries. */
    public LogSequenceNumber replayLsn(Node standby) {
        return replication.standbyLsn(requireStandby(standby), "pg_last_wal_replay_lsn()");
    }

    /** The standby's {@code pg_last_wal_receive_lsn()}: WAL up to here has arrived (maybe not applied). */
    public LogSequenceNumber receiveLsn(Node standby) {
        return replication.standbyLsn(requireStandby(standby), "pg_last_wal_receive_lsn()");
    }

    /**
     * Waits (polling every ~2 ms) until {@code node} has replayed up to {@code lsn}; returns at once for the primary.
     * Connection failures while the node restarts are retried until the deadline.
     *
     * @throws TestkitException on timeout, naming the target and the reached replay/receive positions
     */
    public void awaitReplay(Node node, LogSequenceNumber lsn, Duration timeout) {
        replication.awaitReplay(node, lsn, timeout);
    }

    /** Waits until every running standby whose replay is not paused has replayed the primary's current LSN. */
    public void awaitCaughtUp(Duration timeout) {
        replication.awaitCaughtUp(timeout);
    }

    // ---------------------------------------------------------------- process controls

    /** True while the node's server process runs (always true for external clusters). */
    public boolean isRunning(Node node) {
        return external || processes.get(requireMember(node)).isAlive();
    }

    /** Stops the node with a fast shutdown (SIGINT: sessions are disconnected); a no-op if stopped. */
    public synchronized void stop(Node node) {
        requireManaged("stop");
        processes.get(requireMember(node)).stop(STOP_GRACE);
    }

    /** SIGKILLs the node's postmaster and its backends, like a crash; {@link #start(Node)} runs crash recovery. */
    public synchronized void kill(Node node) {
        requireManaged("kill");
        processes.get(requireMember(node)).killTree();
    }

    /**
     * Starts a stopped or killed node and waits until it accepts connections. For a standby it also
     * waits until the standby streams again (if the primary runs); for the primary until every running
     * standby whose replay is not paused has reconnected. A no-op if the node runs.
     *
     * @throws TestkitException naming the log file if the node does not come back
     */
    public synchronized void start(Node node) {
        requireManaged("start");
        ServerProcess process = processes.get(requireMember(node));
        if (process.isAlive()) {
            return;
        }
        startAndAwaitReady(List.of(node));
        if (!node.isPrimary()) {
            if (processes.get(primary()).isAlive()) {
                awaitStreaming(List.of(node));
            }
        } else {
            // A paused standby does not restart its WAL receiver until resumed, so don't wait for it.
            awaitStreaming(standbys().stream().filter(s -> processes.get(s).isAlive() && !isReplayPaused(s)).collect(Collectors.toList()));
        }
    }

    /** {@link #stop(Node)} then {@link #start(Node)}. */
    public synchronized void restart(Node node) {
        stop(node);
        start(node);
    }

    /**
     * Stops every server this cluster started (fast shutdown, SIGKILL after a grace period) and deletes
     * its temp directory. Idempotent; does nothing to external servers.
     */
    @Override
    public synchronized void close() {
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
        nodes.stream().filter(n -> n.dataDir() != null).forEach(PostgresCluster::removeSharedMemoryOfKilledServer);
        if (workDir != null) {
            try {
                Os.deleteTree(workDir);
            } catch (IOException e) {
                throw new UncheckedIOException("Could not delete " + workDir, e);
            } finally {
                ServerProcess.unregisterTempDir(workDir);
            }
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
                ServerProcess.run("ipcrm for " + node.name(), List.of("ipcrm", "-m", keyAndId[1]), node.logFile(), Duration.ofSeconds(10));
            }
        } catch (IOException | RuntimeException e) {
            // No pid file (clean shutdown), or ipcrm failed: nothing more we can do.
        }
    }

    /** The cluster's temp directory (data dirs, logs, sockets), or {@code null} for external clusters. */
    public Path workDir() {
        return workDir;
    }

    @Override
    public String toString() {
        return "PostgresCluster" + nodes;
    }

    // ---------------------------------------------------------------- helpers

    private Node requireMember(Node node) {
        if (!nodes.contains(node)) {
            throw new IllegalArgumentException(node + " does not belong to this cluster");
        }
        return node;
    }

    private Node requireStandby(Node node) {
        if (requireMember(node).isPrimary()) {
            throw new IllegalArgumentException(node + " is the primary; this control applies to standbys");
        }
        return node;
    }

    private void requireManaged(String operation) {
        if (external) {
            throw new UnsupportedOperationException(operation + "() is not available: this PostgresCluster is attached to external"
                    + " servers (builder().external(...)), which the test kit did not start and cannot start or stop");
        }
        if (closed) {
            throw new IllegalStateException("The cluster is closed");
        }
    }
}
