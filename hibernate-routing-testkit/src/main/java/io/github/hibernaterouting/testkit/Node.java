package io.github.hibernaterouting.testkit;

import java.nio.file.Path;

/**
 * One PostgreSQL server of a {@link PostgresCluster}: the primary or a hot standby.
 *
 * <p>An immutable description (name, address, directories); the cluster holds its process and
 * offers the controls. Nodes compare by identity; {@link PostgresCluster#nodeForPort(int)} maps a
 * port reported by {@code inet_server_port()} back to its node.
 */
public final class Node {
    private final String name;
    private final String host;
    private final int port;
    private final boolean primary;
    private final Path dataDir;
    private final Path logFile;
    private final String jdbcUrl;

    Node(
            String name,
            String host,
            int port,
            String database,
            boolean primary,
            Path dataDir,
            Path logFile,
            String jdbcUrl) {
        this.name = name;
        this.host = host;
        this.port = port;
        this.primary = primary;
        this.dataDir = dataDir;
        this.logFile = logFile;
        this.jdbcUrl = jdbcUrl != null ? jdbcUrl : "jdbc:postgresql://" + host + ":" + port + "/" + database;
    }

    /** "primary", "standby1", "standby2", … */
    public String name() {
        return name;
    }

    /** The address the server listens on (127.0.0.1 for managed clusters). */
    public String host() {
        return host;
    }

    /** The TCP port the server listens on. */
    public int port() {
        return port;
    }

    /** {@code jdbc:postgresql://host:port/database} (for an external server: the URL it was given). */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    /** True for the primary, false for a standby. */
    public boolean isPrimary() {
        return primary;
    }

    /** The data directory, or {@code null} for an external server. */
    public Path dataDir() {
        return dataDir;
    }

    /** The server's log file (its stderr), or {@code null} for an external server. */
    public Path logFile() {
        return logFile;
    }

    @Override
    public String toString() {
        return name + " (" + host + ":" + port + ")";
    }
}
