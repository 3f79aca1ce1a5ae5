package io.github.hibernaterouting.routing.sql;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.QIDENT;

import io.github.hibernaterouting.routing.sql.internal.Tokens;
import java.util.Locale;

/** Identifier tokens as PostgreSQL folds them, for verdict details and catalog lookups. */
final class Identifiers {

    private Identifiers() {}

    /** The case-folded value of identifier token {@code i}: unquoted lower-cased, quoted verbatim. */
    static String folded(Tokens t, int i) {
        if (t.type[i] != QIDENT) {
            return t.text(i).toLowerCase(Locale.ROOT);
        }
        int s = t.start[i];
        if (t.sql.charAt(s) != '"') {
            s += 2; // U&"…": Unicode escapes are not decoded; such a name simply stays unknown
        }
        return t.sql.substring(s + 1, t.end[i] - 1).replace("\"\"", "\"");
    }
}
