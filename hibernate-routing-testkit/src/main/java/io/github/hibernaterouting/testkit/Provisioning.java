package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Creates a managed cluster: resolves the binaries, lays out the temp directory and the ports,
 * runs {@code initdb} for the primary and writes its configuration, creates the roles, the database
 * and one replication slot per standby, and makes each standby from a file copy of the cleanly
 * stopped primary. Returns once every standby streams; on any failure everything started is stopped
 * and removed before the exception propagates.
 */
final class Provisioning {
    static final String ADMIN_USER = "postgres";
    static final String ADMIN_PASSWORD = "testkit-admin-secret";
    static final String REPLICATION_USER = "replicator";
    static final String REPLICATION_PASSWORD = "testkit-replication-secret";

    private final PostgresCluster.Builder config;
    private final ManagedServers servers;
    private Path workDir;
    private Path binDir;

    private Provisioning(PostgresCluster.Builder config) {
        this.config = config;
        this.servers = new ManagedServers(config.startTimeout);
    }

    /** Starts a cluster as {@code config} describes. */
    static PostgresCluster start(PostgresCluster.Builder config) {
        Provisioning provisioning = new Provisioning(config);
        long begin = System.nanoTime();
        try {
            provisioning.run();
        } catch (RuntimeException | Error e) {
            try {
                provisioning.servers.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new PostgresCluster(
                config, provisioning.servers.nodes(), provisioning.servers, (System.nanoTime() - begin) / 1_000_000);
    }

    private void run() {
        binDir = PgBinaries.binDir(config.binaries != null ? config.binaries : Binaries.fromEnvironment());
        workDir = servers.createWorkDir(config.baseDir);
        int[] ports = Os.freePorts(config.standbys + 1);
        if (config.primaryPort != 0) {
            ports[0] = config.primaryPort;
        }
        for (int i = 0; i <= config.standbys; i++) {
            String name = i == 0 ? "primary" : "standby" + i;
            Node node = new Node(
                    name,
                    "127.0.0.1",
                    ports[i],
                    config.database,
                    i == 0,
                    workDir.resolve(name),
                    workDir.resolve(name + ".log"),
                    null);
            servers.add(
                    node,
                    Os.unprivileged(List.of(
                            binDir.resolve("postgres").toString(),
                            "-D",
                            node.dataDir().toString())));
        }
        List<Node> nodes = servers.nodes();
        Node primary = nodes.get(0);
        List<Node> standbys = nodes.subList(1, nodes.size());
        initPrimary(primary);
        servers.startAndAwaitReady(List.of(primary));
        createRolesAndSlots(primary, standbys);
        if (!standbys.isEmpty()) {
            // No pg_basebackup in the Maven binaries: copy the cleanly stopped primary instead,
            // which needs no backup label and is consistent by construction.
            servers.stop(primary);
            for (Node standby : standbys) {
                makeStandby(primary, standby);
            }
            servers.startAndAwaitReady(nodes);
            servers.awaitStreaming(standbys);
        }
    }

    private void initPrimary(Node primary) {
        Path pwFile = workDir.resolve("pwfile");
        try {
            Files.writeString(pwFile, ADMIN_PASSWORD + "\n");
            ServerProcess.run(
                    "initdb for " + primary.name(),
                    Os.unprivileged(List.of(
                            binDir.resolve("initdb").toString(),
                            "-D",
                            primary.dataDir().toString(),
                            "-U",
                            ADMIN_USER,
                            "--pwfile=" + pwFile,
                            "--auth-local=trust",
                            "--auth-host=scram-sha-256",
                            "-E",
                            "UTF8",
                            "--locale=C",
                            "--no-sync")),
                    primary.logFile(),
                    config.startTimeout);
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
            conf.forEach((k, v) ->
                    text.append(k).append(" = '").append(v.replace("'", "''")).append("'\n"));
            // Per-node settings (port, primary_conninfo) live in node.conf, rewritten in each copy.
            text.append("include_if_exists = 'node.conf'\n");
            Files.writeString(primary.dataDir().resolve("postgresql.conf"), text, StandardOpenOption.APPEND);
            Files.writeString(primary.dataDir().resolve("node.conf"), "port = " + primary.port() + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("Could not configure " + primary.dataDir(), e);
        }
    }

    private void createRolesAndSlots(Node primary, List<Node> standbys) {
        try (Connection c = Jdbc.open(primary, "postgres", ADMIN_USER, ADMIN_PASSWORD);
                Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + config.user + " LOGIN PASSWORD " + Jdbc.literal(config.password));
            // FILE_COPY (PG15+) copies the template's files instead of WAL-logging every block: ~1 s faster.
            String strategy = c.getMetaData().getDatabaseMajorVersion() >= 15 ? " STRATEGY FILE_COPY" : "";
            s.execute("CREATE DATABASE " + config.database + " OWNER " + config.user + strategy);
            s.execute("CREATE ROLE " + REPLICATION_USER + " REPLICATION LOGIN PASSWORD "
                    + Jdbc.literal(REPLICATION_PASSWORD));
            for (Node standby : standbys) {
                // A slot per standby keeps WAL on the primary while that standby is down or behind.
                s.execute("SELECT pg_create_physical_replication_slot(" + Jdbc.literal(standby.name()) + ", true)");
            }
        } catch (SQLException e) {
            throw new TestkitException(
                    ServerProcess.failure(
                            "Could not create roles and slots on " + primary + ": " + e.getMessage(),
                            primary.logFile()),
                    e);
        }
    }

    private static void makeStandby(Node primary, Node standby) {
        Path from = primary.dataDir();
        Path to = standby.dataDir();
        try {
            Files.walkFileTree(from, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    // COPY_ATTRIBUTES keeps mode 0700, which postgres insists on for the data directory.
                    Files.copy(dir, to.resolve(from.relativize(dir).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                    // The primary's slots must not exist on the standby (they would pin its WAL forever).
                    return dir.getFileName().toString().equals("pg_replslot")
                            ? FileVisitResult.SKIP_SUBTREE
                            : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    String name = file.getFileName().toString();
                    if (!name.equals("postmaster.pid") && !name.equals("postmaster.opts")) {
                        Files.copy(
                                file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
            Files.writeString(
                    to.resolve("node.conf"),
                    "port = " + standby.port() + "\n"
                            + "primary_conninfo = 'host=127.0.0.1 port=" + primary.port() + " user=" + REPLICATION_USER
                            + " password=" + REPLICATION_PASSWORD + " application_name=" + standby.name() + "'\n"
                            + "primary_slot_name = '" + standby.name() + "'\n");
            Files.createFile(to.resolve("standby.signal"));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not copy " + from + " to " + to, e);
        }
    }
}
