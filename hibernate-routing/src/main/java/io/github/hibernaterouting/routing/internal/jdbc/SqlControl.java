package io.github.hibernaterouting.routing.internal.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.Classification.Control;
import io.github.hibernaterouting.routing.sql.Classification.SettingScope;
import io.github.hibernaterouting.routing.sql.Reason;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What SQL statements leave open on one physical connection of a routed connection, so that the
 * statements after them must run there too: a transaction begun with SQL ({@code BEGIN},
 * {@code START TRANSACTION}) in auto-commit mode, until its {@code COMMIT}, {@code END},
 * {@code ROLLBACK} or {@code ABORT} ({@code … AND CHAIN} keeps it), or until a JDBC transaction that
 * took it over ends. A write in it has its commit's position captured after its {@code COMMIT}.
 * {@link UnitOfWorkRouter} asks it where such statements go, {@link RoutedStatement} tells it what
 * ran. The physical connection that holds it is not released under it ({@link #holds}); when the
 * routed connection closes ({@link #close}), an open transaction is rolled back, so that no physical
 * connection goes back to its pool inside a transaction. Not thread-safe.
 */
final class SqlControl {
    private static final Logger LOG = LoggerFactory.getLogger(SqlControl.class);

    private final PhysicalConnections physicals;
    /** Captures the position of a commit that wrote; set with the routed connection's transaction. */
    CommitCapture commits;

    /** The physical connection of the transaction begun with SQL, or {@code null} if none is open. */
    private Connection transaction;
    /** A write ran in that transaction since its begin or its last {@code COMMIT AND CHAIN}. */
    private boolean wrote;
    /** A {@code COMMIT AND CHAIN} committed a write: its position is captured when the chain ends. */
    private boolean committedWrite;

    SqlControl(PhysicalConnections physicals) {
        this.physicals = physicals;
    }

    /** Whether the routed connection must see {@code statement} run: a setting, a transaction statement. */
    static boolean watched(Classification statement) {
        return statement.settingScope() != SettingScope.NONE
                || statement.control() != Control.NONE
                || statement.reason() == Reason.TRANSACTION_CONTROL;
    }

    /**
     * Whether {@code statement}, inside a JDBC transaction, needs a transaction on the replica
     * connection if it runs there: a setting (which must end with the transaction, or be undone by
     * its rollback), {@code BEGIN} or a savepoint (which need a transaction block).
     */
    static boolean needsTransaction(Classification statement) {
        return switch (statement.control()) {
            case BEGIN, BEGIN_READ_ONLY, SAVEPOINT -> true;
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

    /** Whether {@code physical} must stay bound: a transaction begun with SQL lives on it. */
    boolean holds(Connection physical) {
        return physical != null && physical == transaction;
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

    /** A JDBC transaction ended: it ended the transaction begun with SQL that it took over. */
    void jdbcTransactionEnded(boolean committed) {
        transaction = null;
        wrote = false;
        committedWrite = false;
    }

    /**
     * The routed connection closes: rolls back the transaction begun with SQL on its connection, which
     * then goes back to its pool outside a transaction (one where that fails leaves its pool).
     */
    void close() {
        if (transaction != null) {
            run(transaction, "ROLLBACK");
            transaction = null;
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
}
