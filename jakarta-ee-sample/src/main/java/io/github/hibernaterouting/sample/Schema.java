package io.github.hibernaterouting.sample;

import io.github.hibernaterouting.routing.sql.internal.Masking;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * Creates the sample's tables and seed users on the primary ({@code db/schema.sql}), the way a
 * migration tool would before the application starts.
 *
 * <p>It runs before the persistence unit is built because {@code hibernate.routing.actor_stamps=TABLE}
 * checks the users table and its {@code pg_lsn} column at bootstrap.
 */
final class Schema {
    private static final String SCRIPT = "/db/schema.sql";

    private Schema() {}

    /**
     * Runs the script on the primary; idempotent.
     *
     * @throws IllegalStateException naming the server (never a credential of its URL) if it fails
     */
    static void apply(Servers servers) {
        final Properties credentials = new Properties();
        credentials.setProperty("user", servers.user());
        credentials.setProperty("password", servers.password() == null ? "" : servers.password());
        try (Connection connection = DriverManager.getConnection(servers.primaryUrl(), credentials);
                Statement statement = connection.createStatement()) {
            // The script has no semicolons inside statements, so splitting on them is enough.
            for (String sql : script().split(";")) {
                if (!sql.replaceAll("(?m)^\\s*--.*$", "").isBlank()) {
                    statement.execute(sql);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "Could not create the sample's schema on the primary " + Masking.url(servers.primaryUrl()) + " as "
                            + servers.user() + ": " + Masking.text(e.getMessage()),
                    e);
        }
    }

    private static String script() {
        try (InputStream in = Schema.class.getResourceAsStream(SCRIPT)) {
            if (in == null) {
                throw new IllegalStateException(SCRIPT + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
