package io.github.hibernaterouting.routing.internal.session;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/**
 * What a stateless session read on a replica, for the lost-update check. A stateless session keeps
 * no loaded state and Hibernate fires no load event for it, so the state a later {@code update}
 * writes cannot be compared with what was read. What can be known is the SQL each replica statement
 * ran: the tables of an entity about to be written are looked for in it, as words. A match that is
 * not a real read of the table (a column or an alias of the same name) refuses a write that was
 * safe, which is the side to err on; a table reached only through a view or a function is not seen.
 *
 * <p>Hibernate generates few distinct statements, so the distinct SQL is kept; past {@link #LIMIT}
 * of them every table counts as read.
 */
final class StatelessReads {
    static final int LIMIT = 512;

    private final Set<String> statements = new LinkedHashSet<>();
    private boolean overflowed;

    void ran(String sql) {
        if (overflowed || sql == null) {
            return;
        }
        if (statements.size() >= LIMIT) {
            overflowed = true;
            statements.clear();
            return;
        }
        statements.add(sql.toLowerCase(Locale.ROOT));
    }

    /**
     * The first of {@code tables} (names as Hibernate gives them, maybe qualified or quoted) that a
     * replica statement may have read, or {@code null}.
     */
    String readOne(Iterable<String> tables) {
        for (String table : tables) {
            if (overflowed) {
                return table;
            }
            final String name = bareName(table);
            for (String sql : statements) {
                if (containsWord(sql, name)) {
                    return table;
                }
            }
        }
        return null;
    }

    /** {@code "app"."Note"} and {@code app.note} both give {@code note}: the last part, unquoted, in lower case. */
    static String bareName(String table) {
        String name = table.trim();
        final int dot = name.lastIndexOf('.');
        if (dot >= 0) {
            name = name.substring(dot + 1);
        }
        if (name.length() >= 2 && (name.charAt(0) == '"' || name.charAt(0) == '`')) {
            name = name.substring(1, name.length() - 1);
        }
        return name.toLowerCase(Locale.ROOT);
    }

    static boolean containsWord(String text, String word) {
        if (word.isEmpty()) {
            return false;
        }
        int from = 0;
        while (true) {
            final int at = text.indexOf(word, from);
            if (at < 0) {
                return false;
            }
            final int end = at + word.length();
            if ((at == 0 || !identifierPart(text.charAt(at - 1)))
                    && (end == text.length() || !identifierPart(text.charAt(end)))) {
                return true;
            }
            from = at + 1;
        }
    }

    private static boolean identifierPart(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }
}
