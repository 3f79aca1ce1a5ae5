package io.github.hibernaterouting.routing.sql;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.CAST;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.DOT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.QIDENT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.RPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;

import io.github.hibernaterouting.routing.sql.FunctionCatalog.Volatility;
import io.github.hibernaterouting.routing.sql.internal.NameTable;
import io.github.hibernaterouting.routing.sql.internal.Tokens;

/**
 * Finds the function calls in a query and judges each one: by built-in knowledge generated from
 * {@code pg_proc} ({@link BuiltinFunctions}: writers, volatility, harmless volatile functions),
 * then by the optional {@link FunctionCatalog} for the database's own functions. A call that is
 * not proven read-only gets a verdict for the primary.
 *
 * <p>Identifiers followed by a parenthesis that are not calls — type modifiers, alias and CTE
 * column lists, grammar keywords such as {@code FETCH NEXT (…)} ({@link GrammarKeywords}) — are
 * told apart by context. With a catalog, a qualified name may also be a call in attribute notation
 * ({@link #attributeCall}). Stateless apart from the catalog, so one instance serves all threads.
 */
final class FunctionCalls {

    private final FunctionCatalog catalog;

    FunctionCalls(FunctionCatalog catalog) {
        this.catalog = catalog;
    }

    /**
     * If token {@code i} starts a (possibly schema-qualified) function name followed by {@code (},
     * the verdict on that call when it is not read-only; otherwise null. Identifiers followed by
     * a parenthesis that are not calls — type modifiers, alias and CTE column lists, grammar
     * keywords — are recognised by context.
     */
    Classification functionCall(Tokens t, int from, int i, int to) {
        int first = i;
        if (first > from && t.type[first - 1] == DOT) {
            return null; // inside a qualified name we already looked at from its start
        }
        int last = i;
        while (last + 2 < to && t.type[last + 1] == DOT && (t.type[last + 2] == WORD || t.type[last + 2] == QIDENT)) {
            last += 2;
        }
        if (last + 1 >= to || t.type[last + 1] != LPAREN) {
            return null;
        }
        boolean qualified = last > first;
        if (first > from && !followsCallContext(t, first - 1)) {
            return null;
        }
        int close = t.match[last + 1];
        if (close > 0
                && t.is(close + 1, "as")
                && (t.type(close + 2) == LPAREN || t.is(close + 2, "materialized") || t.is(close + 2, "not"))) {
            return null; // WITH name(columns) AS (…)
        }
        boolean quoted = t.type[last] == QIDENT;
        int ns = t.start[last];
        int ne = t.end[last];
        if (!quoted && !qualified) {
            int kw = BuiltinFunctions.KEYWORDS.get(t.sql, ns, ne);
            // Reserved and column-name keywords cannot name a function unquoted, so before "(" they
            // are grammar: IN (…), EXISTS (…), COALESCE (…). Other keywords can (a user function
            // may be called "next" or "rows"), so they are grammar only where the tokens before them
            // say so: FETCH NEXT (…), ORDER BY x ROWS (…) PRECEDING, LEFT JOIN (…).
            if (kw != NameTable.ABSENT
                    && BuiltinFunctions.VOLATILITY.get(t.sql, ns, ne) == NameTable.ABSENT
                    && (kw == BuiltinFunctions.KW_RESERVED
                            || kw == BuiltinFunctions.KW_COLUMN_NAME
                            || GrammarKeywords.isGrammar(t, from, first))) {
                return null;
            }
        }
        String schema = qualified ? Identifiers.folded(t, last - 2) : null;
        boolean builtinScope = schema == null || schema.equals("pg_catalog");
        if (quoted) {
            String name = Identifiers.folded(t, last);
            return judge(
                    name,
                    builtinScope,
                    schema,
                    builtinScope ? BuiltinFunctions.VOLATILITY.getExact(name) : NameTable.ABSENT,
                    builtinScope && BuiltinFunctions.isWriter(name, 0, name.length()),
                    BuiltinFunctions.isHarmlessVolatile(name, 0, name.length()));
        }
        int builtin = builtinScope ? BuiltinFunctions.VOLATILITY.get(t.sql, ns, ne) : NameTable.ABSENT;
        boolean writer = builtinScope && BuiltinFunctions.isWriter(t.sql, ns, ne);
        if (writer) {
            return Classification.of(Reason.WRITING_FUNCTION, Identifiers.folded(t, last));
        }
        if (builtin != NameTable.ABSENT && builtin != BuiltinFunctions.VOLATILE && catalog == FunctionCatalog.NONE) {
            return null; // the hot path: a STABLE or IMMUTABLE built-in, no catalog to consult
        }
        return judge(
                Identifiers.folded(t, last),
                builtinScope,
                schema,
                builtin,
                false,
                BuiltinFunctions.isHarmlessVolatile(t.sql, ns, ne));
    }

    /**
     * If identifier token {@code i}, which follows a dot, may be a function call in attribute
     * notation — {@code t.f} or {@code (expr).f}, which PostgreSQL runs as {@code f(t)} when there is
     * no column {@code f} — and the catalog knows a function {@code f} callable with one argument,
     * the verdict on that call when it is not read-only; otherwise null. Without a catalog there is
     * nothing to tell a column from a function by, so this never finds anything (a known limit).
     */
    Classification attributeCall(Tokens t, int from, int i, int to) {
        if (catalog == FunctionCatalog.NONE || i + 1 < to && t.type[i + 1] == LPAREN) {
            return null; // a qualified call is judged from its first part
        }
        int start = i;
        while (start - 2 >= from
                && t.type[start - 1] == DOT
                && (t.type[start - 2] == WORD || t.type[start - 2] == QIDENT)) {
            start -= 2;
        }
        boolean afterExpression = start - 1 >= from && t.type[start - 1] == DOT; // (expr).a.b, arr[1].a
        if (!afterExpression) {
            // schema.table.column: only the last part can be a function, and only in an expression.
            if (start == i
                    || i + 1 < to && t.type[i + 1] == DOT
                    || start > from && namesARelationOrType(t, from, start - 1)) {
                return null;
            }
        }
        String name = Identifiers.folded(t, i);
        if (!catalog.callableWithOneArgument(null, name)) {
            return null;
        }
        boolean quoted = t.type[i] == QIDENT;
        return judge(
                name,
                true,
                null,
                quoted
                        ? BuiltinFunctions.VOLATILITY.getExact(name)
                        : BuiltinFunctions.VOLATILITY.get(t.sql, t.start[i], t.end[i]),
                BuiltinFunctions.isWriter(name, 0, name.length()),
                BuiltinFunctions.isHarmlessVolatile(name, 0, name.length()));
    }

    /**
     * Whether the token {@code p} before a qualified name makes it a relation or type name rather
     * than a column: {@code FROM}, {@code JOIN}, {@code ONLY}, {@code TABLE}, {@code INTO},
     * {@code ::}, {@code AS}, {@code COLLATE}. A {@code FROM} inside {@code EXTRACT(…)},
     * {@code SUBSTRING(…)}, {@code TRIM(…)}, {@code OVERLAY(…)} or after {@code IS DISTINCT} is
     * followed by an expression.
     */
    private static boolean namesARelationOrType(Tokens t, int from, int p) {
        if (t.type[p] == CAST) {
            return true;
        }
        if (t.is(p, "from")) {
            if (t.is(p - 1, "distinct")) {
                return false;
            }
            for (int j = p - 1; j >= from; j--) {
                if (t.type[j] == RPAREN) {
                    j = t.match[j];
                    if (j < 0) {
                        return false;
                    }
                } else if (t.type[j] == LPAREN) {
                    return !(t.is(j - 1, "extract")
                            || t.is(j - 1, "substring")
                            || t.is(j - 1, "trim")
                            || t.is(j - 1, "overlay"));
                }
            }
            return true;
        }
        return t.is(p, "join")
                || t.is(p, "only")
                || t.is(p, "table")
                || t.is(p, "into")
                || t.is(p, "as")
                || t.is(p, "collate");
    }

    private Classification judge(
            String name, boolean builtinScope, String schema, int builtin, boolean writer, boolean harmless) {
        if (writer) {
            return Classification.of(Reason.WRITING_FUNCTION, name);
        }
        if (builtin != NameTable.ABSENT) {
            if (schema == null && catalog != FunctionCatalog.NONE) {
                // A user-defined overload of a built-in name is worse than pg_catalog's own version.
                Volatility any = catalog.volatility(null, name);
                Volatility own = catalog.volatility("pg_catalog", name);
                if (any == Volatility.VOLATILE && own != Volatility.VOLATILE) {
                    return Classification.of(Reason.VOLATILE_FUNCTION, name);
                }
            }
            if (builtin != BuiltinFunctions.VOLATILE || harmless) {
                return null;
            }
            return Classification.of(Reason.VOLATILE_FUNCTION, name);
        }
        Volatility v = catalog.volatility(schema, name);
        switch (v) {
            case IMMUTABLE:
            case STABLE:
                return null;
            case VOLATILE:
                return Classification.of(Reason.VOLATILE_FUNCTION, name);
            default:
                return Classification.of(
                        Reason.UNKNOWN_FUNCTION, builtinScope || schema == null ? name : schema + '.' + name);
        }
    }

    /**
     * Whether the token before a name followed by {@code (} puts it in expression position. After
     * {@code ::} or {@code AS} it is a type or an alias column list; after a plain identifier or a
     * closing parenthesis it is an alias column list ({@code FROM t x(a, b)},
     * {@code generate_series(1, 3) g(i)}), except after {@code DISTINCT ON (…)} and {@code OPERATOR(…)}.
     */
    private static boolean followsCallContext(Tokens t, int prev) {
        int type = t.type[prev];
        if (type == CAST || type == QIDENT) {
            return false;
        }
        if (type == RPAREN) {
            // The grammar puts an expression right after "DISTINCT ON (…)" and "OPERATOR(…)".
            int open = t.match[prev];
            return open > 0 && (t.is(open - 1, "on") && t.is(open - 2, "distinct") || t.is(open - 1, "operator"));
        }
        if (type == WORD) {
            if (t.is(prev, "as")) {
                return false;
            }
            if (JdbcEscapes.isFunctionKeyword(t, prev)) {
                return true; // {fn name(…)}: pgjdbc passes name(…) on to the server
            }
            return BuiltinFunctions.KEYWORDS.get(t.sql, t.start[prev], t.end[prev]) != NameTable.ABSENT;
        }
        return true;
    }
}
