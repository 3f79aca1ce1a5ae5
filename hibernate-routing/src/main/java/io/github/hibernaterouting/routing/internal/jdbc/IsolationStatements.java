package io.github.hibernaterouting.routing.internal.jdbc;

import java.sql.Connection;
import java.util.Locale;

/**
 * Which isolation level a {@code SET} or {@code RESET} statement asks for, so that routing knows it
 * before the statement runs: {@code SET TRANSACTION ISOLATION LEVEL …} and
 * {@code SET transaction_isolation = …} for the current transaction;
 * {@code SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL …} and
 * {@code SET default_transaction_isolation = …} for the transactions after it; {@code RESET ALL},
 * {@code RESET default_transaction_isolation} and {@code SET default_transaction_isolation TO DEFAULT}
 * back to the default. Only asked about statements the classifier calls settings (or that make a
 * transaction serializable), which are rare; the answer is an {@code int} so that it allocates
 * nothing beyond the text it reads.
 */
final class IsolationStatements {
    /** The statement does not change the isolation level. */
    static final int NONE = 0;
    /** Flag: the change holds for the current transaction only. */
    static final int TRANSACTION = 1 << 8;
    /** The statement resets the session's default to the server's. */
    static final int RESET = 1 << 9;

    private IsolationStatements() {}

    /** The JDBC level (possibly with {@link #TRANSACTION}), {@link #RESET}, or {@link #NONE}. */
    static int of(String sql) {
        final String[] words = words(sql);
        if (words.length < 2) {
            return NONE;
        }
        if (words[0].equals("reset")) {
            return words[1].equals("all") || words[1].equals("default_transaction_isolation") ? RESET : NONE;
        }
        if (!words[0].equals("set")) {
            return NONE;
        }
        int i = 1;
        final boolean local = words[i].equals("local");
        if (local || words[i].equals("session")) {
            i++;
        }
        // The transaction modes come in any order: READ ONLY, ISOLATION LEVEL …, DEFERRABLE.
        if (at(words, i, "transaction")) {
            return forTheTransaction(level(words, isolationLevel(words, i + 1)));
        }
        if (at(words, i, "characteristics", "as", "transaction")) {
            return level(words, isolationLevel(words, i + 3));
        }
        if (at(words, i, "transaction_isolation")) {
            return forTheTransaction(level(words, value(words, i + 1)));
        }
        if (at(words, i, "default_transaction_isolation") && !local) {
            // SET LOCAL of the default changes no transaction that could still start in this one.
            final int v = value(words, i + 1);
            return at(words, v, "default") ? RESET : level(words, v);
        }
        return NONE;
    }

    private static int forTheTransaction(int level) {
        return level == NONE ? NONE : level | TRANSACTION;
    }

    /** The level in {@code words} from {@code i}, or {@link #NONE}. */
    private static int level(String[] words, int i) {
        if (at(words, i, "serializable")) {
            return Connection.TRANSACTION_SERIALIZABLE;
        }
        if (at(words, i, "repeatable", "read")) {
            return Connection.TRANSACTION_REPEATABLE_READ;
        }
        if (at(words, i, "read", "committed")) {
            return Connection.TRANSACTION_READ_COMMITTED;
        }
        if (at(words, i, "read", "uncommitted")) {
            return Connection.TRANSACTION_READ_UNCOMMITTED;
        }
        return NONE;
    }

    /** The JDBC level of a result of {@link #of}; {@link #NONE} for none, or for a reset. */
    static int level(int change) {
        return change & 0xFF;
    }

    /** The index of the level after {@code ISOLATION LEVEL} from {@code i} on, or past the end. */
    private static int isolationLevel(String[] words, int i) {
        for (; i < words.length - 1; i++) {
            if (words[i].equals("isolation") && words[i + 1].equals("level")) {
                return i + 2;
            }
        }
        return words.length;
    }

    /** The index of a setting's value after its name: past {@code TO} or {@code =}. */
    private static int value(String[] words, int i) {
        return at(words, i, "to") || at(words, i, "=") ? i + 1 : i;
    }

    private static boolean at(String[] words, int i, String... expected) {
        if (i + expected.length > words.length) {
            return false;
        }
        for (int k = 0; k < expected.length; k++) {
            if (!words[i + k].equals(expected[k])) {
                return false;
            }
        }
        return true;
    }

    /**
     * The statement's words, lower-cased, without comments and quotes ({@code 'repeatable read'} is
     * two words), with {@code =} and {@code ,} apart; empty for a script of several statements.
     */
    static String[] words(String sql) {
        final StringBuilder text = new StringBuilder(sql.length());
        final int n = sql.length();
        for (int i = 0; i < n; i++) {
            final char c = sql.charAt(i);
            if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                while (i < n && sql.charAt(i) != '\n') {
                    i++;
                }
                text.append(' ');
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                final int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 1;
                text.append(' ');
            } else if (c == '\'' || c == '"' || Character.isWhitespace(c)) {
                text.append(' ');
            } else if (c == '=' || c == ',') {
                text.append(' ').append(c).append(' ');
            } else if (c == ';') {
                if (!sql.substring(i + 1).isBlank()) {
                    return new String[0];
                }
            } else {
                text.append(c);
            }
        }
        final String trimmed = text.toString().trim().toLowerCase(Locale.ROOT);
        return trimmed.isEmpty() ? new String[0] : trimmed.split(" +");
    }
}
