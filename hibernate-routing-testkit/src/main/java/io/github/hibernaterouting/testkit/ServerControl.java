package io.github.hibernaterouting.testkit;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Predicate;

/**
 * What a {@link PostgresCluster} can do to its servers, which depends on who runs them:
 * {@link ManagedServers} for servers the kit started, {@link ExternalServers} for servers it
 * attached to. The cluster checks membership and serializes the lifecycle methods.
 */
interface ServerControl {
    /**
     * Throws if the process control {@code operation} ("stop", "kill", "start") is not available.
     *
     * @throws UnsupportedOperationException for external servers
     * @throws IllegalStateException once the servers are closed
     */
    void requireControl(String operation);

    /**
     * True while the node's server runs (always for external servers).
     *
     * @throws IllegalArgumentException if the kit started no server for {@code node}
     */
    boolean isRunning(Node node);

    /** Fast shutdown (SIGINT); a no-op if stopped. */
    void stop(Node node);

    /** SIGKILL of the postmaster and its backends. */
    void kill(Node node);

    /**
     * Starts a stopped or killed node and waits until it accepts connections, then until it streams
     * (a standby) or until the running standbys that {@code replayPaused} does not exclude stream
     * again (the primary). A no-op if the node runs.
     */
    void start(Node node, Predicate<Node> replayPaused);

    /** A new superuser connection (for external servers: as the configured user). */
    Connection adminConnection(Node node) throws SQLException;

    /** The temp directory of the servers, or {@code null} for external servers. */
    Path workDir();

    /** Stops every server the kit started and deletes its files; idempotent. */
    void close();
}
