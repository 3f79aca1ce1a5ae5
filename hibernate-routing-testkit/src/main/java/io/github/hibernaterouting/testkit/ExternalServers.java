package io.github.hibernaterouting.testkit;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Predicate;
import org.postgresql.Driver;

/**
 * Servers someone else runs, attached to with {@code builder().external(...)}: the kit only
 * connects, as the given user, and offers no process controls.
 */
final class ExternalServers implements ServerControl {
    private final String user;
    private final String password;

    private ExternalServers(String user, String password) {
        this.user = user;
        this.password = password;
    }

    /**
     * A cluster of the given servers, once each answered: the primary must not be in recovery, each
     * standby must be.
     *
     * @throws IllegalArgumentException for a URL that is not a PostgreSQL JDBC URL
     * @throws TestkitException if a server cannot be reached or has the wrong role
     */
    static PostgresCluster attach(PostgresCluster.Builder config) {
        List<String> urls = new ArrayList<>();
        urls.add(config.externalPrimary);
        urls.addAll(config.externalStandbys);
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < urls.size(); i++) {
            Properties p = Driver.parseURL(urls.get(i), null);
            if (p == null) {
                throw new IllegalArgumentException("Not a PostgreSQL JDBC URL: " + urls.get(i));
            }
            String host = p.getProperty("PGHOST", "localhost").split(",")[0];
            int port = Integer.parseInt(p.getProperty("PGPORT", "5432").split(",")[0]);
            nodes.add(new Node(
                    i == 0 ? "primary" : "standby" + i,
                    host,
                    port,
                    p.getProperty("PGDBNAME", ""),
                    i == 0,
                    null,
                    null,
                    urls.get(i)));
        }
        for (Node node : nodes) {
            try (Connection c = Jdbc.open(node, null, config.user, config.password);
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT pg_is_in_recovery()")) {
                rs.next();
                if (rs.getBoolean(1) == node.isPrimary()) {
                    throw new TestkitException("External " + node + " at " + node.jdbcUrl()
                            + (node.isPrimary()
                                    ? " is in recovery, but was given as the primary"
                                    : " is not in recovery, but was given as a standby"));
                }
            } catch (SQLException e) {
                throw new TestkitException(
                        "Cannot connect to external " + node + " at " + node.jdbcUrl() + ": " + e.getMessage(), e);
            }
        }
        return new PostgresCluster(config, nodes, new ExternalServers(config.user, config.password), 0);
    }

    @Override
    public void requireControl(String operation) {
        throw new UnsupportedOperationException(
                operation + "() is not available: this PostgresCluster is attached to external"
                        + " servers (builder().external(...)), which the test kit did not start and cannot start or stop");
    }

    @Override
    public boolean isRunning(Node node) {
        return true;
    }

    @Override
    public void stop(Node node) {
        requireControl("stop");
    }

    @Override
    public void kill(Node node) {
        requireControl("kill");
    }

    @Override
    public void start(Node node, Predicate<Node> replayPaused) {
        requireControl("start");
    }

    @Override
    public Connection adminConnection(Node node) throws SQLException {
        return Jdbc.open(node, null, user, password);
    }

    @Override
    public Path workDir() {
        return null;
    }

    @Override
    public void close() {
        // The kit started nothing here.
    }
}
