package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.consistency.ActorStamps.StampTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The statements of {@code actor_stamps=TABLE}, made once at bootstrap for the actors' table as checked
 * on the primary: the commit's position with the stamp raised to it, the same inside a transaction, the
 * background retry of a deferred stamp, and the read of a stamp.
 */
record StampTableSql(String commit, String inTransaction, String retry, String read) {
    /** How long a commit's stamp waits for the actor's row before it is deferred to a background retry. */
    static final long COMMIT_LOCK_TIMEOUT_MILLIS = 100;

    /** How long the background retry waits for the row (no caller waits for it). */
    static final long RETRY_LOCK_TIMEOUT_MILLIS = 1000;

    /** The table as checked at bootstrap: its name qualified with its schema, and the key column's type. */
    private record CheckedTable(String qualifiedName, String keyType) {}

    /**
     * Checks the actors' table on the primary and makes its statements.
     *
     * @throws RoutingConfigurationException naming the setting, if the table or a column is missing or wrong
     */
    static StampTableSql check(StampTable table, DataSource primary) {
        // Both statements run on the application's primary connections, whose search_path a carried
        // SET may have changed: they name the table found at bootstrap, with its schema.
        final CheckedTable checked = checkTable(table, primary);
        final String where = " where " + table.keyColumn() + " = ?::" + checked.keyType();
        final String raise = "update " + checked.qualifiedName() + " set " + table.column() + " = greatest("
                + table.column() + ", (select lsn from position))";
        // The commit's position and the stamp raised to it, in one round trip on the connection that
        // committed. A data-modifying WITH runs even if nothing reads it, so an actor without a row
        // still gets the position. Being volatile, the position is computed once.
        // The position as a standby reports it once replayed (WalPositions.replayable).
        final String position = "with inserted as materialized (select pg_catalog.pg_current_wal_insert_lsn() as lsn), "
                + "position as (select " + WalPositions.replayable("lsn") + " as lsn from inserted), ";
        // Another transaction may hold the actor's row (an enclosing one on the same thread, which waits
        // for this commit: a deadlock no server sees; or any long one): the update waits for the row only
        // as long as lock_timeout, which the filter sets before the row is locked, for this statement's
        // own transaction only (it runs in auto-commit).
        final String commitSql = position + "stamp as (" + raise + where + " and "
                + lockTimeout(COMMIT_LOCK_TIMEOUT_MILLIS) + ") select lsn::text from position";
        // Inside the application's transaction a lock_timeout would outlive the statement, and a failed
        // statement would need a rollback to a savepoint, which some JTA pools refuse on an enlisted
        // connection: a row another transaction holds is skipped, and the stamp after the commit raises it.
        final String inTransactionSql = position + "locked as (select " + table.keyColumn() + " as k from "
                + checked.qualifiedName() + where + " for update skip locked), stamp as (" + raise + " where "
                + table.keyColumn() + " in (select k from locked)) select lsn::text from position";
        final String retrySql = "update " + checked.qualifiedName() + " set " + table.column() + " = greatest("
                + table.column() + ", ?::pg_lsn)" + where + " and " + lockTimeout(RETRY_LOCK_TIMEOUT_MILLIS);
        // Tagged, so that server logs tell the library's reads of the stamp from the application's.
        final String readSql = "/* hibernate-routing actor-stamp */ select " + table.column() + "::text from "
                + checked.qualifiedName() + where;
        return new StampTableSql(commitSql, inTransactionSql, retrySql, readSql);
    }

    /** A filter that sets {@code lock_timeout} for the rest of the current transaction (always true). */
    private static String lockTimeout(long millis) {
        return "pg_catalog.set_config('lock_timeout', '" + millis + "ms', true) is not null";
    }

    /**
     * Checks that the table and both columns exist and the stamp column is {@code pg_lsn}; returns the
     * table's schema-qualified name and the key column's type.
     */
    private static CheckedTable checkTable(StampTable config, DataSource primary) {
        final String sql = "select a.attname, format_type(a.atttypid, a.atttypmod), "
                + "quote_ident(n.nspname) || '.' || quote_ident(c.relname) "
                + "from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace "
                + "where a.attrelid = to_regclass(?) and a.attname in (?, ?) and not a.attisdropped";
        String keyType = null;
        String stampType = null;
        String qualifiedName = null;
        try (Connection connection = primary.getConnection();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, config.table());
            statement.setString(2, config.keyColumn());
            statement.setString(3, config.column());
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    qualifiedName = rs.getString(3);
                    if (rs.getString(1).equals(config.keyColumn())) {
                        keyType = rs.getString(2);
                    }
                    if (rs.getString(1).equals(config.column())) {
                        stampType = rs.getString(2);
                    }
                }
            }
        } catch (SQLException e) {
            throw RoutingConfigurationException.withMessage(
                    RoutingSettings.ACTOR_STAMPS,
                    "Could not check the actor stamp table '" + config.table() + "' on the primary: " + e.getMessage());
        }
        final String snippet = "alter table " + config.table() + " add column " + config.column() + " pg_lsn;";
        if (keyType == null) {
            throw RoutingConfigurationException.withMessage(
                    RoutingSettings.ACTOR_STAMPS_TABLE,
                    "'" + RoutingSettings.ACTOR_STAMPS + "=TABLE' needs table '"
                            + config.table() + "' with key column '" + config.keyColumn() + "' on the primary; set '"
                            + RoutingSettings.ACTOR_STAMPS_TABLE + "' and '" + RoutingSettings.ACTOR_STAMPS_KEY_COLUMN
                            + "', or use actor_stamps=MEMORY");
        }
        if (!"pg_lsn".equals(stampType)) {
            throw RoutingConfigurationException.withMessage(
                    RoutingSettings.ACTOR_STAMPS_COLUMN,
                    "'" + RoutingSettings.ACTOR_STAMPS
                            + "=TABLE' needs a pg_lsn column '" + config.column() + "' (setting '"
                            + RoutingSettings.ACTOR_STAMPS_COLUMN
                            + "') in table '" + config.table() + "'"
                            + (stampType == null ? "; add it with: " + snippet : ", but it is " + stampType));
        }
        return new CheckedTable(qualifiedName, keyType);
    }
}
