package io.github.hibernaterouting.testkit;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
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
 *
 * <p>The cluster is a facade over package-private parts: {@code Provisioning} creates a managed
 * cluster, {@code ManagedServers} runs its processes, {@code ExternalServers} stands in for servers
 * it attached to, and {@code ReplicationControl} implements the replication controls.
 */
public final class PostgresCluster implements AutoCloseable {
    private final Builder config;
    private final List<Node> nodes;
    private final ServerControl servers;
    private final ReplicationControl replication = new ReplicationControl(this);
    private final long startupMillis;

    PostgresCluster(Builder config, List<Node> nodes, ServerControl servers, long startupMillis) {
        this.config = config;
        this.nodes = List.copyOf(nodes);
        this.servers = servers;
        this.startupMillis = startupMillis;
    }

    /** A builder with defaults: 2 standbys, database "app", user "app" / "app-secret", Maven binaries. */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures a {@link PostgresCluster}; not thread-safe, use once. */
    public static final class Builder {
        int standbys = 2;
        String database = "app";
        String user = "app";
        String password = "app-secret";
        Binaries binaries;
        final Map<String, String> settings = new LinkedHashMap<>();
        int primaryPort;
        Duration startTimeout = Duration.ofSeconds(60);
        Path baseDir;
        String externalPrimary;
        List<String> externalStandbys = List.of();

        private Builder() {}

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
            if (n.equals(Provisioning.ADMIN_USER) || n.equals(Provisioning.REPLICATION_USER)) {
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
            return externalPrimary != null ? ExternalServers.attach(this) : Provisioning.start(this);
        }

        private static String requireName(String name, String what) {
            if (name == null || !name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new IllegalArgumentException(what + " must be a plain identifier: " + name);
            }
            return name;
        }
    }

    /** How long {@link Builder#start()} took, in milliseconds (0 for external clusters). */
    public long startupMillis() {
        return startupMillis;
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
            throw new IllegalArgumentException(
                    "No standby" + number + "; this cluster has " + (nodes.size() - 1) + " standbys");
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
        properties.put(
                "hibernate.routing.replica_urls",
                standbys().stream().map(Node::jdbcUrl).collect(Collectors.joining(",")));
        return properties;
    }

    /**
     * The node listening on {@code port}, e.g. from {@code SELECT inet_server_port()}.
     *
     * @throws IllegalArgumentException if no node listens there
     */
    public Node nodeForPort(int port) {
        return nodes.stream()
                .filter(n -> n.port() == port)
                .findFirst()
                .orElseThrow(
                        () -> new IllegalArgumentException("No node listens on port " + port + "; nodes: " + nodes));
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
        return servers.adminConnection(node);
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

    /**
     * Promotes {@code standby} to a primary on a new timeline ({@code pg_promote()}; returns once it
     * accepts writes), as a failover manager does. Nothing else changes: {@link #primary()} stays the
     * node the cluster started with (stop it for a failover), other standbys follow it until
     * {@link #follow}, and the replication helpers still treat the promoted node as a standby. A test
     * that promotes owns its cluster.
     */
    public synchronized void promote(Node standby) {
        servers.requireControl("promote");
        replication.promote(requireStandby(standby));
    }

    /**
     * Re-points {@code standby} to stream from {@code upstream} (a promoted standby), as after a
     * switchover: a slot on {@code upstream}, {@code primary_conninfo} changed with {@code ALTER SYSTEM}
     * and a reload. Returns once the standby streams from {@code upstream} on its timeline.
     *
     * @throws TestkitException if it does not within 60 s (a standby that replayed WAL the new
     *     primary does not have cannot follow it)
     */
    public synchronized void follow(Node standby, Node upstream) {
        servers.requireControl("follow");
        replication.follow(requireStandby(standby), requireMember(upstream));
    }

    /** Cuts {@code standby} off its upstream (empties {@code primary_conninfo}), once its WAL receiver is gone. */
    public synchronized void detach(Node standby) {
        servers.requireControl("detach");
        replication.detach(requireStandby(standby));
    }

    // ---------------------------------------------------------------- process controls

    /** True while the node's server process runs (always true for external clusters). */
    public boolean isRunning(Node node) {
        return servers.isRunning(node);
    }

    /** Stops the node with a fast shutdown (SIGINT: sessions are disconnected); a no-op if stopped. */
    public synchronized void stop(Node node) {
        servers.requireControl("stop");
        servers.stop(requireMember(node));
    }

    /** SIGKILLs the node's postmaster and its backends, like a crash; {@link #start(Node)} runs crash recovery. */
    public synchronized void kill(Node node) {
        servers.requireControl("kill");
        servers.kill(requireMember(node));
    }

    /**
     * Starts a stopped or killed node and waits until it accepts connections. For a standby it also
     * waits until the standby streams again (if the primary runs); for the primary until every running
     * standby whose replay is not paused has reconnected. A no-op if the node runs.
     *
     * @throws TestkitException naming the log file if the node does not come back
     */
    public synchronized void start(Node node) {
        servers.requireControl("start");
        servers.start(requireMember(node), this::isReplayPaused);
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
        servers.close();
    }

    /** The cluster's temp directory (data dirs, logs, sockets), or {@code null} for external clusters. */
    public Path workDir() {
        return servers.workDir();
    }

    @Override
    public String toString() {
        return "PostgresCluster" + nodes;
    }

    // ---------------------------------------------------------------- helpers

    private Node requireMember(Node node) {
        if (!nodes.contains(node)) {
            throw notAMember(node);
        }
        return node;
    }

    static IllegalArgumentException notAMember(Node node) {
        return new IllegalArgumentException(node + " does not belong to this cluster");
    }

    private Node requireStandby(Node node) {
        if (requireMember(node).isPrimary()) {
            throw new IllegalArgumentException(node + " is the primary; this control applies to standbys");
        }
        return node;
    }
}
