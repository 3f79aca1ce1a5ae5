package io.github.hibernaterouting.routing.sql;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.OP;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.PARAM;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;

import io.github.hibernaterouting.routing.sql.internal.NameTable;
import io.github.hibernaterouting.routing.sql.internal.Tokens;

/**
 * The JDBC escape syntax, which pgjdbc rewrites before the server sees the SQL. PostgreSQL itself
 * has no use for <code>{</code> outside literals, so a brace in the token stream is always one.
 *
 * <p>pgjdbc translates <code>{d '…'}</code>, <code>{t '…'}</code>, <code>{ts '…'}</code>,
 * <code>{oj …}</code> and <code>{escape '…'}</code> into plain SQL, and <code>{fn name(args)}</code>
 * into a read-only expression for the names it knows ({@code ucase}, {@code curdate}, {@code insert}
 * (an {@code overlay}), …); any other function name it passes through as {@code name(args)}, so the
 * server runs that function. It reads the escape keyword without a separating space, so
 * <code>{fnnextval('s')}</code> calls {@code nextval}: a brace followed by any word other than
 * the escape keywords is not proven harmless. A statement <code>{call f(…)}</code> or
 * <code>{? = call f(…)}</code> calls a procedure or function.
 */
final class JdbcEscapes {

    /** The words pgjdbc or the JDBC specification put after <code>{</code>. */
    private static final NameTable KEYWORDS = flags("fn", "oj", "d", "t", "ts", "escape", "call", "limit");

    /**
     * The <code>{fn …}</code> names pgjdbc replaces with read-only SQL (its {@code EscapedFunctions2},
     * looked up case-insensitively); the server never sees these names.
     */
    private static final NameTable TRANSLATED = flags(
            "ceiling",
            "log",
            "log10",
            "power",
            "truncate",
            "char",
            "concat",
            "insert",
            "lcase",
            "left",
            "length",
            "locate",
            "ltrim",
            "right",
            "rtrim",
            "space",
            "substring",
            "ucase",
            "curdate",
            "curtime",
            "dayname",
            "dayofmonth",
            "dayofweek",
            "dayofyear",
            "hour",
            "minute",
            "month",
            "monthname",
            "quarter",
            "second",
            "week",
            "year",
            "timestampadd",
            "timestampdiff",
            "database",
            "ifnull",
            "user");

    private JdbcEscapes() {}

    /** Whether token {@code i} is an opening brace. */
    static boolean isOpenBrace(Tokens t, int i) {
        return t.type(i) == OP && isText(t, i, "{");
    }

    /** Whether the brace at {@code brace} is followed by an escape keyword (or the {@code ?} of <code>{? = call</code>). */
    static boolean isKnown(Tokens t, int brace) {
        int k = brace + 1;
        if (t.type(k) == WORD) {
            return KEYWORDS.get(t.sql, t.start[k], t.end[k]) != NameTable.ABSENT;
        }
        return isQuestionMark(t, k);
    }

    /** Whether token {@code i} is the {@code fn} of <code>{fn</code>, so that a function name follows. */
    static boolean isFunctionKeyword(Tokens t, int i) {
        return t.is(i, "fn") && isOpenBrace(t, i - 1);
    }

    /**
     * If the brace at {@code brace} opens <code>{fn name(</code> with a name pgjdbc translates into
     * read-only SQL, the index of that name; otherwise -1.
     */
    static int translatedFunction(Tokens t, int brace) {
        int name = brace + 2;
        if (t.is(brace + 1, "fn")
                && t.type(name) == WORD
                && t.type(name + 1) == LPAREN
                && onlyWhitespace(t.sql, t.end[name], t.start[name + 1])
                && TRANSLATED.get(t.sql, t.start[name], t.end[name]) != NameTable.ABSENT) {
            return name;
        }
        return -1;
    }

    /**
     * pgjdbc takes everything up to the parenthesis, trimmed, for the name: with a comment in
     * between it does not recognise the name and passes the call through to the server.
     */
    private static boolean onlyWhitespace(String sql, int from, int to) {
        for (int i = from; i < to; i++) {
            if (sql.charAt(i) > ' ') {
                return false;
            }
        }
        return true;
    }

    /**
     * For a statement starting with a brace at {@code from}: the index of the {@code call} keyword of
     * <code>{call …}</code> or <code>{? = call …}</code>, or -1.
     */
    static int callKeyword(Tokens t, int from, int to) {
        int i = from + 1;
        if (t.type(i) == PARAM && isText(t, i, "?")) {
            i++;
            if (!(t.type(i) == OP && isText(t, i, "="))) {
                return -1;
            }
            i++;
        } else if (t.type(i) == OP && isText(t, i, "?=")) {
            i++; // the lexer reads "{?=call" as one operator "?="
        }
        return i < to && t.is(i, "call") ? i : -1;
    }

    private static boolean isQuestionMark(Tokens t, int i) {
        return t.type(i) == PARAM && isText(t, i, "?") || t.type(i) == OP && isText(t, i, "?=");
    }

    private static boolean isText(Tokens t, int i, String text) {
        return t.end[i] - t.start[i] == text.length() && t.sql.startsWith(text, t.start[i]);
    }

    private static NameTable flags(String... names) {
        int[] ones = new int[names.length];
        java.util.Arrays.fill(ones, 1);
        return new NameTable(names, ones);
    }
}
