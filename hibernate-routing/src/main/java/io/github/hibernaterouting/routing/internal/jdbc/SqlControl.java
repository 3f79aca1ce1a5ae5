package io.github.hibernaterouting.routing.internal.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.Classification.Control;
import io.github.hibernaterouting.routing.sql.Classification.SettingScope;
import io.github.hibernaterouting.routing.sql.Reason;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What SQL statements leave open on one physical connection of a routed connection, so that the
 * statements about it must run there too:
 * <ul>
 * <li>a transaction begun with SQL ({@code BEGIN}, {@code START TRANSACTION}) in auto-commit mode,
 * until its {@code COMMIT}, {@code END}, {@code ROLLBACK} or {@code ABORT} ({@code … AND CHAIN}
 * keeps it), or until a JDBC transaction that took it over ends. A write in it has its commit's
 * position captured after its {@code COMMIT};</li>
 * <li>cursors ({@code DECLARE}), which {@code FETCH}, {@code MOVE} and {@code CLOSE} name, until they
 * are closed or their transaction ends; a {@code WITH HOLD} one outlives a transaction that commits.</li>
 * </ul>
 * {@link UnitOfWorkRouter} asks it where such statements go, {@link RoutedStatement} tells it what
 * ran. A physical connection that holds either is not released under it ({@link #holds}); when the
 * routed connection closes ({@link #close}), an open transaction is rolled back and the cursors are
 * closed, so that no physical connection goes back to its pool inside a transaction or with a cursor
 * open. Not thread-safe.
 */
final class SqlControl {
    private static final Logger LOG = LoggerFactory.getLogger(SqlControl.class);

    /** An open cursor: where, and how long it lives. */
    private static final class Cursor {
        final Connection connection;
        final boolean withHold;
        /** Declared in a transaction still open: a rollback removes it, {@code WITH HOLD} or not. */
        boolean inTransaction;

        Cursor(Connection connection, boolean withHold, boolean inTransaction) {
            this.connection = connection;
            this.withHold = withHold;
            this.inTransaction = inTransaction;
        }
    }

    private final PhysicalConnections physicals;
    /** Captures the position of a commit that wrote; set with the routed connection's transaction. */
    CommitCapture commits;

    /** The physical connection of the transaction begun with SQL, or {@code null} if none is open. */
    private Connection transaction;
    /** A write ran in that transaction since its begin or its last {@code COMMIT AND CHAIN}. */
    private boolean wrote;
    /** A {@code COMMIT AND CHAIN} committed a write: its position is captured when the chain ends. */
    private boolean committedWrite;
    /** The open cursors by name (case-folded as PostgreSQL does); {@code null} until the first. */
    private Map<String, Cursor> cursors;

    SqlControl(PhysicalConnections physicals) {
        this.physicals = physicals;
    }

    /** Whether the routed connection must see {@code statement} run: a setting, a transaction or cursor statement. */
    static boolean watched(Classification statement) {
        return statement.settingScope() != SettingScope.NONE
                || statement.control() != Control.NONE
                || statement.reason() == Reason.TRANSACTION_CONTROL;
    }

    /**
     * Whether {@code statement}, inside a JDBC transaction, needs a transaction on the replica
     * connection if it runs there: a setting (which must end with the transaction, or be undone by
     * its rollback), {@code BEGIN} or a savepoint (which need a transaction block), a {@code DECLARE}
     * (a cursor lives in a transaction).
     */
    static boolean needsTransaction(Classification statement) {
        return switch (statement.control()) {
            case BEGIN, BEGIN_READ_ONLY, SAVEPOINT, CURSOR_OPEN -> true;
            default -> statement.settingScope() != SettingScope.NONE;
        };
    }

    /** The physical connection of the transaction begun with SQL; {@code null} if none is open. */
    Connection transaction() {
        return transaction;
    }

    /**
     * A write is about to run in auto-commit mode: if a transaction begun with SQL is open, it belongs
     * to it, and its position is captured after that transaction's {@code COMMIT}.
     *
     * @return whether it belongs to such a transaction
     */
    boolean wroteInTransaction() {
        if (transaction == null) {
            return false;
        }
        wrote = true;
        return true;
    }

    /**
     * A JDBC transaction begins while a transaction begun with SQL is open: it takes it over, and ends
     * it when it ends.
     *
     * @return whether that transaction wrote, so the JDBC transaction's commit must capture its position
     */
    boolean jdbcTransactionBegan() {
        final boolean wroteBefore = transaction != null && (wrote || committedWrite);
        wrote = false;
        committedWrite = false;
        return wroteBefore;
    }

    /** The connection of the open cursor {@code name}; {@code null} if there is none, or it is no longer bound. */
    Connection cursor(String name) {
        if (cursors == null || name == null) {
            return null;
        }
        final Cursor cursor = cursors.get(name);
        if (cursor == null) {
            return null;
        }
        if (cursor.connection != physicals.primary && cursor.connection != physicals.replica) {
            cursors.remove(name);
            return null;
        }
        return cursor.connection;
    }

    /** For {@code CLOSE ALL}: a connection with open cursors, the transaction's if it has any; else {@code null}. */
    Connection anyCursor() {
        if (cursors == null) {
            return null;
        }
        Connection any = null;
        for (Cursor cursor : cursors.values()) {
            if (cursor.connection == transaction) {
                return transaction;
            }
            any = cursor.connection;
        }
        return any == physicals.primary || any == physicals.replica ? any : null;
    }

    /** Whether {@code physical} must stay bound: a transaction begun with SQL, or a cursor, lives on it. */
    boolean holds(Connection physical) {
        if (physical == null) {
            return false;
        }
        if (physical == transaction) {
            return true;
        }
        if (cursors != null) {
            for (Cursor cursor : cursors.values()) {
                if (cursor.connection == physical) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A statement {@link #watched} ran on {@code physical}.
     *
     * @param ok whether it ran without an error; a {@code COMMIT} that failed still ended its
     *        transaction, as a rollback
     */
    void ran(Connection physical, String sql, Classification statement, boolean ok) {
        switch (statement.control()) {
            case BEGIN, BEGIN_READ_ONLY -> {
                // Inside a transaction PostgreSQL only warns: nothing begins.
                if (ok && physicals.autoCommit && transaction == null) {
                    transaction = physical;
                    wrote = false;
                    committedWrite = false;
                    physicals.changed();
                }
            }
            case END -> ended(physical, ok && commits(sql), false);
            case CURSOR_OPEN -> {
                if (ok && statement.cursorName() != null) {
                    opened(statement.cursorName(), physical, withHold(sql));
                }
            }
            case CURSOR_CLOSE -> {
                if (ok) {
                    closed(statement.cursorName(), physical);
                }
            }
            case NONE -> {
                if (statement.reason() == Reason.TRANSACTION_CONTROL) {
                    final String[] words = IsolationStatements.words(sql);
                    if (chains(words)) {
                        ended(physical, ok && commits(words), true);
                    }
                }
            }
            default -> {
                // SAVEPOINT: it ran where the transaction runs.
            }
        }
    }

    /** A transaction ended on {@code physical}, by SQL; {@code chained}: the next one began there at once. */
    private void ended(Connection physical, boolean committed, boolean chained) {
        cursorsEnded(physical, committed);
        if (physical != transaction) {
            return;
        }
        physicals.changed();
        if (!physicals.autoCommit) {
            // A JDBC transaction took it over: its commit captures the position, its end ends the rest.
            if (!chained) {
                transaction = null;
            }
            return;
        }
        physicals.settings.sqlTransactionEnded(committed);
        committedWrite |= committed && wrote;
        wrote = false;
        if (!chained) {
            transaction = null;
            if (committedWrite && physical == physicals.primary && commits != null) {
                commits.committed(physical);
            }
            committedWrite = false;
        }
    }

    /** A JDBC transaction ended: it ended the transaction begun with SQL that it took over, and its cursors. */
    void jdbcTransactionEnded(boolean committed) {
        transaction = null;
        wrote = false;
        committedWrite = false;
        if (cursors != null) {
            cursors.values().removeIf(cursor -> !cursor.withHold || !committed && cursor.inTransaction);
            cursors.values().forEach(cursor -> cursor.inTransaction = false);
        }
    }

    /** The transaction on {@code physical} ended: its cursors close, but for {@code WITH HOLD} ones it committed. */
    private void cursorsEnded(Connection physical, boolean committed) {
        if (cursors == null) {
            return;
        }
        cursors.values()
                .removeIf(cursor ->
                        cursor.connection == physical && (!cursor.withHold || !committed && cursor.inTransaction));
        for (Cursor cursor : cursors.values()) {
            if (cursor.connection == physical) {
                cursor.inTransaction = false;
            }
        }
    }

    private void opened(String name, Connection physical, boolean withHold) {
        if (cursors == null) {
            cursors = new HashMap<>(4);
        }
        cursors.put(name, new Cursor(physical, withHold, !physicals.autoCommit || transaction == physical));
        physicals.changed();
    }

    /** {@code CLOSE name}, or {@code CLOSE ALL} ({@code name} null), ran on {@code physical}. */
    private void closed(String name, Connection physical) {
        if (cursors == null) {
            return;
        }
        if (name != null) {
            cursors.remove(name);
        } else {
            // On one connection CLOSE ALL closes every cursor: close those of the other connection too.
            for (Cursor cursor : cursors.values()) {
                if (cursor.connection != physical) {
                    run(cursor.connection, "CLOSE ALL");
                    break;
                }
            }
            cursors.clear();
        }
        physicals.changed();
    }

    /**
     * The routed connection closes: rolls back the transaction begun with SQL and closes the cursors
     * on their connections, which then go back to their pools clean (a connection where that fails
     * leaves its pool), and forgets them.
     */
    void close() {
        if (transaction != null) {
            run(transaction, "ROLLBACK");
            cursorsEnded(transaction, false);
            transaction = null;
        }
        if (cursors != null) {
            while (!cursors.isEmpty()) {
                final Connection connection = cursors.values().iterator().next().connection;
                if (connection == physicals.primary || connection == physicals.replica) {
                    run(connection, "CLOSE ALL");
                }
                cursors.values().removeIf(cursor -> cursor.connection == connection);
            }
        }
        wrote = false;
        committedWrite = false;
    }

    /** Runs {@code sql} on {@code physical} for the library; if it fails, the connection leaves its pool. */
    private void run(Connection physical, String sql) {
        try (Statement statement = physical.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            LOG.debug("{} on a physical connection failed ({}); evicting it", sql, e.getMessage());
            if (physical == physicals.replica && physicals.replicaNode != null) {
                physicals.replicaNode.evict(physical);
            } else if (physicals.primarySource instanceof HikariDataSource pool) {
                pool.evictConnection(physical);
            }
        }
    }

    /** Whether an end of a transaction ({@code COMMIT}, {@code END}, their {@code AND CHAIN}) commits. */
    private static boolean commits(String sql) {
        return commits(IsolationStatements.words(sql));
    }

    private static boolean commits(String[] words) {
        return words.length > 0 && (words[0].equals("commit") || words[0].equals("end"));
    }

    /** Whether the words are {@code COMMIT}, {@code END}, {@code ROLLBACK} or {@code ABORT} … {@code AND CHAIN}. */
    private static boolean chains(String[] words) {
        if (words.length < 3 || !(commits(words) || words[0].equals("rollback") || words[0].equals("abort"))) {
            return false;
        }
        final int i = words[1].equals("work") || words[1].equals("transaction") ? 2 : 1;
        return words.length == i + 2 && words[i].equals("and") && words[i + 1].equals("chain");
    }

    /** Whether a {@code DECLARE} says {@code WITH HOLD}: right after {@code CURSOR}, before {@code FOR}. */
    private static boolean withHold(String sql) {
        final String[] words = sql.trim().split("\\s+");
        for (int i = 1; i < words.length - 1 && !words[i].equalsIgnoreCase("for"); i++) {
            if (words[i].equalsIgnoreCase("with") && words[i + 1].equalsIgnoreCase("hold")) {
                return true;
            }
        }
        return false;
    }
}
