package io.github.hibernaterouting.routing.internal.consistency;

import java.sql.Connection;

/**
 * Transaction isolation levels as JDBC numbers them ({@link Connection#TRANSACTION_READ_COMMITTED}
 * …), read from what PostgreSQL says ({@code current_setting('transaction_isolation')}); {@link #UNKNOWN}
 * before anything was read.
 *
 * <p>What routing needs from a level: above READ COMMITTED a transaction needs one snapshot on one
 * server, and a hot standby refuses SERIALIZABLE outright (read-only and deferrable included).
 */
public final class IsolationLevel {
    /** Not known (yet). */
    public static final int UNKNOWN = -1;

    private IsolationLevel() {}

    /**
     * The level of PostgreSQL's text ({@code read committed}, {@code repeatable read}, …, any case),
     * {@link #UNKNOWN} for anything else.
     */
    public static int parse(String text) {
        if (text == null) {
            return UNKNOWN;
        }
        return switch (text.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "serializable" -> Connection.TRANSACTION_SERIALIZABLE;
            case "repeatable read" -> Connection.TRANSACTION_REPEATABLE_READ;
            case "read committed" -> Connection.TRANSACTION_READ_COMMITTED;
            case "read uncommitted" -> Connection.TRANSACTION_READ_UNCOMMITTED;
            default -> UNKNOWN;
        };
    }

    /** Whether a transaction at {@code level} needs one snapshot for all its statements (REPEATABLE READ or SERIALIZABLE). */
    public static boolean aboveReadCommitted(int level) {
        return level == Connection.TRANSACTION_REPEATABLE_READ || level == Connection.TRANSACTION_SERIALIZABLE;
    }
}
