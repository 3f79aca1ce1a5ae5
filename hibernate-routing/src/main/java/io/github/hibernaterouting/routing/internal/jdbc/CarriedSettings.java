package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.Classification.SettingScope;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code SET} and {@code RESET} statements a routed connection ran, carried over to every
 * physical connection of the unit of work.
 *
 * <p>To the application the routed connection is one connection, so a setting must hold for every
 * statement that follows, wherever it runs: it is recorded and run again, in order, on each other
 * physical connection before its next statement, and on connections bound later; until the
 * transaction ends for {@code SET LOCAL}, {@code SET TRANSACTION} and {@code SET CONSTRAINTS}, and
 * for as long as the routed connection lives otherwise, unless the transaction it ran in rolls
 * back. Only settings that ran without an error are recorded. Not thread-safe.
 */
final class CarriedSettings {
    /** A {@code SET} or {@code RESET} that ran, and which bound physical connections have it. */
    private static final class Setting {
        final String sql;
        /** The parameter it sets, null if unknown (a script). */
        final String name;

        final boolean untilTransactionEnds;
        /** Ran inside the current transaction: a rollback undoes it, as PostgreSQL undoes a {@code SET}. */
        boolean inTransaction;

        boolean onPrimary;
        boolean onReplica;

        Setting(String sql, String name, boolean untilTransactionEnds) {
            this.sql = sql;
            this.name = name;
            this.untilTransactionEnds = untilTransactionEnds;
        }

        /** Whether {@code newer} sets the same parameter in the same way, so that it replaces this one. */
        boolean replacedBy(Setting newer) {
            return name != null
                    && name.equals(newer.name)
                    && untilTransactionEnds == newer.untilTransactionEnds
                    && inTransaction == newer.inTransaction;
        }
    }

    /** The settings that ran, in order; null until the first. */
    private List<Setting> settings;

    /** Whether no setting is carried: the common case, checked before every statement. */
    boolean isEmpty() {
        return settings == null;
    }

    /**
     * A setting ran without an error.
     *
     * @param onPrimary it ran on the primary connection
     * @param onReplica it ran on the replica connection
     * @param inTransaction a transaction is open on the routed connection
     */
    void ran(String sql, Classification classification, boolean onPrimary, boolean onReplica, boolean inTransaction) {
        final boolean untilTransactionEnds = classification.settingScope() == SettingScope.TRANSACTION;
        if (untilTransactionEnds && !inTransaction) {
            // Outside a transaction SET LOCAL has no effect (the server only warns): nothing to carry.
            return;
        }
        final Setting setting = new Setting(sql, classification.detail(), untilTransactionEnds);
        setting.inTransaction = inTransaction;
        setting.onPrimary = onPrimary;
        setting.onReplica = onReplica;
        if (settings == null) {
            settings = new ArrayList<>(2);
        } else if (!settings.isEmpty() && settings.get(settings.size() - 1).replacedBy(setting)) {
            // The same parameter set again right after: the newer value replaces the older, so a
            // loop of SETs leaves one entry. Only the last one: an earlier entry may matter to the
            // ones after it (a SET ROLE that allowed them).
            settings.remove(settings.size() - 1);
        }
        settings.add(setting);
    }

    /** The SQL of the settings carried, in order; for tests. */
    List<String> sql() {
        return settings == null
                ? List.of()
                : settings.stream().map(setting -> setting.sql).toList();
    }

    /** Whether a recorded setting has not run on the primary ({@code isPrimary}) or the replica yet. */
    boolean missingOn(boolean isPrimary) {
        for (Setting setting : settings) {
            if (!(isPrimary ? setting.onPrimary : setting.onReplica)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs on {@code physical}, in order, the recorded settings it does not have yet.
     *
     * @param where the physical connection in words, for the error message
     * @throws SQLException if one fails; it says where it could not be carried and what to do instead
     */
    void carryTo(Connection physical, boolean isPrimary, String where) throws SQLException {
        for (Setting setting : settings) {
            if (isPrimary ? setting.onPrimary : setting.onReplica) {
                continue;
            }
            try (Statement statement = physical.createStatement()) {
                statement.execute(setting.sql);
            } catch (SQLException e) {
                throw new SQLException(
                        "Could not carry a SET or RESET statement this unit of work ran over to the " + where
                                + ", where its next statement runs: " + e.getMessage()
                                + ". Set session configuration in the JDBC URL (options=-c name=value) or with SET LOCAL inside the transaction instead",
                        e.getSQLState(),
                        e);
            }
            if (isPrimary) {
                setting.onPrimary = true;
            } else {
                setting.onReplica = true;
            }
        }
    }

    /** Whether the replica connection ran a session-level setting, which may have undone its read-only default. */
    boolean replicaHasSessionSetting() {
        if (settings != null) {
            for (Setting setting : settings) {
                if (setting.onReplica && !setting.untilTransactionEnds) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The transaction ended: the session-level settings made in it hold from now on if it committed;
     * PostgreSQL undoes them if it rolled back. ({@link #physicalsReleased} drops {@code SET LOCAL}
     * either way.)
     */
    void transactionEnded(boolean committed) {
        if (settings == null) {
            return;
        }
        if (committed) {
            for (Setting setting : settings) {
                setting.inTransaction = false;
            }
        } else {
            settings.removeIf(setting -> setting.inTransaction);
        }
    }

    /**
     * A transaction begun with SQL ended (or chained) on the one connection it ran on: its session
     * settings hold if it committed and are undone if not, and its {@code SET LOCAL} is gone.
     */
    void sqlTransactionEnded(boolean committed) {
        if (settings == null) {
            return;
        }
        transactionEnded(committed);
        settings.removeIf(setting -> setting.untilTransactionEnds);
    }

    /** The replica connection went back to its pool: the next one needs the settings anew. */
    void replicaReleased() {
        if (settings != null) {
            settings.forEach(setting -> setting.onReplica = false);
        }
    }

    /** Every physical connection went back: {@code SET LOCAL} is gone, and the next connections need the rest again. */
    void physicalsReleased() {
        if (settings != null) {
            settings.removeIf(setting -> setting.untilTransactionEnds);
            for (Setting setting : settings) {
                setting.onPrimary = false;
                setting.onReplica = false;
            }
        }
    }
}
