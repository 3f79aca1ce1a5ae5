package io.github.hibernaterouting.routing.sql;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.DOT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.QIDENT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.SEMI;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;

import io.github.hibernaterouting.routing.sql.internal.Tokens;

/**
 * Whether SQL creates a temporary object (a temporary table, view or sequence, or one in a
 * {@code pg_temp} schema): it changes what names mean for the rest of the session, as
 * {@code search_path} does, so later reads of that session must run where it was made.
 */
final class TemporaryObjects {
    private TemporaryObjects() {}

    /**
     * Whether a statement of the script creates a temporary object (see
     * {@link Classification#createsTemporaryObject()}): a {@code CREATE} whose head says
     * {@code TEMP}/{@code TEMPORARY} or that names a {@code pg_temp} schema, or a {@code SELECT …
     * INTO} whose target does. Only asked for verdicts for the primary, which are rarer.
     */
    static boolean created(Tokens t) {
        int from = 0;
        for (int i = 0; i <= t.count; i++) {
            if (i == t.count || t.type[i] == SEMI) {
                if (i > from && createsTemporaryObject(t, from, i)) {
                    return true;
                }
                from = i + 1;
            }
        }
        return false;
    }

    private static boolean createsTemporaryObject(Tokens t, int from, int to) {
        if (t.is(from, "create")) {
            int i = from + 1;
            if (t.is(i, "or") && t.is(i + 1, "replace")) {
                i += 2;
            }
            if (t.is(i, "global") || t.is(i, "local")) {
                i++;
            }
            if (t.is(i, "temp") || t.is(i, "temporary")) {
                return true;
            }
            // CREATE … pg_temp.name, or a view over a temporary table, which PostgreSQL makes temporary.
            for (int j = i; j < to; j++) {
                if (temporarySchema(t, j, to)) {
                    return true;
                }
            }
            return false;
        }
        if (t.type[from] != LPAREN
                && !t.is(from, "select")
                && !t.is(from, "with")
                && !t.is(from, "explain")
                && !t.is(from, "prepare")) {
            return false;
        }
        for (int i = from + 1; i < to; i++) {
            if (t.is(i, "into")) {
                int j = i + 1;
                if (t.is(j, "global") || t.is(j, "local")) {
                    j++;
                }
                if (t.is(j, "temp") || t.is(j, "temporary") || temporarySchema(t, j, to)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether token {@code i} is a schema {@code pg_temp} or {@code pg_temp_N} that qualifies a name. */
    private static boolean temporarySchema(Tokens t, int i, int to) {
        if (i + 1 >= to || t.type[i + 1] != DOT || t.type[i] != WORD && t.type[i] != QIDENT) {
            return false;
        }
        final String name = Identifiers.folded(t, i);
        return name.equals("pg_temp") || name.startsWith("pg_temp_");
    }
}
