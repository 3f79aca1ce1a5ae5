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
 *
 * <p><b>Concurrent starts.</b> Several instances started together on an empty database all run the
 * script at once. {@code create table if not exists} is not safe against that: two sessions both find
 * no table, both insert its row type into {@code pg_type}, and the later one fails with
 * {@code duplicate key value violates unique constraint "pg_type_typname_nsp_index"}. So the script
 * runs in one transaction that first takes a transaction-level advisory lock
 * ({@code pg_advisory_xact_lock}, key {@link #LOCK_KEY}) on the primary. The instances queue on the
 * lock; each one's {@code if not exists} statements run only after the previous instance committed,
 * see its tables (in {@code READ COMMITTED} every statement reads the catalog afresh) and do nothing.
 * The lock is released by the commit or the rollback, also when the connection breaks, so a failed
 * start never leaves it held; and a script that fails half-way leaves no half-made schema behind.
 */
final class Schema {
    /** The advisory lock that serialises the schema step of instances sharing a database ("sample-s" in ASCII). */
    static final long LOCK_KEY = 0x73616d706c652d73L;

    private static final String SCRIPT = "/db/schema.sql";

    private Schema() {}

    /**
     * Runs the script on the primary, in one transaction under {@link #LOCK_KEY}; idempotent, and safe
     * when several instances run it at once.
     *
     * @throws IllegalStateException naming the server (never a credential of its URL) if it fails
     */
    static void apply(Servers servers) {
        final Properties credentials = new Properties();
        credentials.setProperty("user", servers.user());
        credentials.setProperty("password", servers.password() == null ? "" : servers.password());
        try (Connection connection = DriverManager.getConnection(servers.primaryUrl(), credentials)) {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
                statement.execute("select pg_advisory_xact_lock(" + LOCK_KEY + ")");
                // The script has no semicolons inside statements, so splitting on them is enough.
                for (String sql : script().split(";")) {
                    if (!sql.replaceAll("(?m)^\\s*--.*$", "").isBlank()) {
                        statement.execute(sql);
                    }
                }
                connection.commit();
            } catch (SQLException | RuntimeException e) {
                try {
                    connection.rollback();
                } catch (SQLException rollback) {
                    e.addSuppressed(rollback);
                }
                throw e;
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
