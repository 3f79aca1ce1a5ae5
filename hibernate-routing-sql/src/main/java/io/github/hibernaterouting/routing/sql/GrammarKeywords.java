package io.github.hibernaterouting.routing.sql;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.COMMA;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.DOT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.NUMBER;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.PARAM;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.QIDENT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.RBRACKET;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.RPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.STRING;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;

import io.github.hibernaterouting.routing.sql.internal.NameTable;
import io.github.hibernaterouting.routing.sql.internal.Tokens;

/**
 * Tells an unquoted keyword that the grammar puts before a parenthesis apart from a function of the
 * same name. Reserved and column-name keywords need no help (they cannot name a function unquoted),
 * but unreserved and type/function-name keywords can: a user may define a function {@code next},
 * {@code value} or {@code rows}. So the keywords below count as grammar only where the preceding
 * token(s) put them in their grammatical place — {@code FETCH NEXT (5)}, {@code ORDER BY y ROWS (1)
 * PRECEDING}, {@code GROUP BY CUBE (a)}, {@code LIKE x ESCAPE (…)}, {@code AT TIME ZONE (…)},
 * {@code AS NOT MATERIALIZED (…)}, {@code LEFT JOIN (…)}, {@code CHARACTER VARYING (10)}, … —
 * and anywhere else they are judged as calls. A keyword the grammar puts after a closing parenthesis
 * ({@code OVER}, {@code FILTER}, {@code REPEATABLE}) is never a call there anyway, since
 * {@link FunctionCalls} reads {@code ) name (} as an alias column list.
 *
 * <p>When in doubt the answer is "a call", which costs at most an offload.
 */
final class GrammarKeywords {

    private static final int BY = 1;
    private static final int SETS = 2;
    private static final int GROUPING_CLAUSE = 3;
    private static final int FETCH_COUNT = 4;
    private static final int AFTER_OPERAND = 5;
    private static final int LIKE = 6;
    private static final int ZONE = 7;
    private static final int OPERATOR = 8;
    private static final int MATERIALIZED = 9;
    private static final int SECOND = 10;
    private static final int VARYING = 11;
    private static final int FRAME = 12;
    private static final int VALUE = 13;
    private static final int ORDINALITY = 14;
    private static final int JOIN = 15;

    private static final NameTable RULES = new NameTable(
            new String[] {
                "by",
                "sets",
                "cube",
                "rollup",
                "first",
                "next",
                "escape",
                "columns",
                "passing",
                "like",
                "ilike",
                "zone",
                "operator",
                "materialized",
                "second",
                "varying",
                "rows",
                "range",
                "groups",
                "value",
                "ordinality",
                "join"
            },
            new int[] {
                BY,
                SETS,
                GROUPING_CLAUSE,
                GROUPING_CLAUSE,
                FETCH_COUNT,
                FETCH_COUNT,
                AFTER_OPERAND,
                AFTER_OPERAND,
                AFTER_OPERAND,
                LIKE,
                LIKE,
                ZONE,
                OPERATOR,
                MATERIALIZED,
                SECOND,
                VARYING,
                FRAME,
                FRAME,
                FRAME,
                VALUE,
                ORDINALITY,
                JOIN
            });

    /** Keywords that end an operand: after them, a keyword such as ESCAPE continues the expression. */
    private static final NameTable OPERAND_KEYWORDS = flags(
            "null",
            "true",
            "false",
            "end",
            "current_date",
            "current_time",
            "current_timestamp",
            "localtime",
            "localtimestamp",
            "current_user",
            "current_role",
            "current_catalog",
            "current_schema",
            "session_user",
            "system_user",
            "user");

    /**
     * Unreserved keywords the grammar may put right before an expression ({@code ORDER BY f(x)},
     * {@code XMLPARSE(DOCUMENT f(x))}, {@code AT TIME ZONE f(x)}, …); after any other unreserved
     * keyword, a LIKE or ILIKE is the operator.
     */
    private static final NameTable EXPRESSION_INTRODUCERS = flags(
            "by",
            "escape",
            "document",
            "content",
            "version",
            "value",
            "key",
            "passing",
            "zone",
            "first",
            "next",
            "rows",
            "range",
            "groups",
            "format",
            "encoding",
            "path",
            "set",
            "standalone",
            "nested",
            "columns",
            "partition",
            "over",
            "filter",
            "within",
            "repeatable",
            "increment",
            "start",
            "restart",
            "minvalue",
            "maxvalue",
            "cache",
            "owned",
            "cycle",
            "of",
            "at",
            "nulls",
            "depth",
            "breadth",
            "unbounded",
            "matched",
            "absolute",
            "relative",
            "forward",
            "backward",
            "prior",
            "last",
            "ordinality",
            "search",
            "empty",
            "error",
            "keep",
            "omit",
            "wrapper",
            "quotes",
            "plans",
            "local",
            "session",
            "ref");

    /** Keywords that start a clause other than GROUP BY: a comma after one is not in a grouping list. */
    private static final NameTable CLAUSE_KEYWORDS = flags(
            "select",
            "from",
            "where",
            "having",
            "window",
            "order",
            "limit",
            "offset",
            "fetch",
            "for",
            "union",
            "intersect",
            "except",
            "returning",
            "values",
            "into",
            "on",
            "using",
            "with",
            "as",
            "set",
            "partition");

    private GrammarKeywords() {}

    /**
     * Whether the unquoted keyword at {@code i}, followed by {@code (}, is grammar rather than a
     * function call, judged by what precedes it in {@code [from, i)}.
     */
    static boolean isGrammar(Tokens t, int from, int i) {
        final int rule = RULES.get(t.sql, t.start[i], t.end[i]);
        if (rule == NameTable.ABSENT) {
            return false;
        }
        final int p = i - 1;
        if (p < from) {
            return false;
        }
        switch (rule) {
            case BY:
                return t.is(p, "group") || t.is(p, "order") || t.is(p, "partition");
            case SETS:
                return t.is(p, "grouping");
            case GROUPING_CLAUSE:
                return inGroupingList(t, from, p);
            case FETCH_COUNT:
                return t.is(p, "fetch");
            case AFTER_OPERAND:
                return endsOperand(t, p);
            case LIKE:
                // NOT LIKE (…), name ILIKE (…): a column named like an unreserved keyword is common here.
                return t.is(p, "not") || endsOperand(t, p) || isOperandKeyword(t, p);
            case ZONE:
                return t.is(p, "time");
            case OPERATOR:
                // OPERATOR '(' always shifts to the operator syntax: a function "operator" needs quotes.
                return true;
            case MATERIALIZED:
                return t.is(p, "as") || t.is(p, "not") && t.is(p - 1, "as");
            case SECOND:
                // INTERVAL '1' SECOND (3), MINUTE TO SECOND (3); not SIMILAR TO second(x).
                return t.is(p, "to") && (t.is(p - 1, "day") || t.is(p - 1, "hour") || t.is(p - 1, "minute"))
                        || t.is(p, "interval")
                        || endsOperand(t, p);
            case VARYING:
                return t.is(p, "character") || t.is(p, "char") || t.is(p, "nchar") || t.is(p, "bit");
            case FRAME:
                // A window frame: after the window's "(", its ORDER BY or PARTITION BY, or a sort option.
                // Not after FETCH FIRST, where rows(1) is the count: FETCH FIRST rows(1) ROWS ONLY.
                return t.is(p, "asc")
                        || t.is(p, "desc")
                        || (t.is(p, "first") || t.is(p, "last")) && t.is(p - 1, "nulls")
                        || endsOperand(t, p)
                        || t.type[p] == LPAREN && (t.is(p - 1, "over") || t.is(p - 1, "as"));
            case VALUE:
                // PASSING BY VALUE (…) in XMLEXISTS and XMLTABLE, JSON_OBJECT('k' VALUE (…)); not GROUP BY value(x).
                return t.is(p, "by") && t.is(p - 1, "passing") || endsOperand(t, p);
            case ORDINALITY:
                return t.is(p, "with");
            case JOIN:
                return t.is(p, "left")
                        || t.is(p, "right")
                        || t.is(p, "full")
                        || t.is(p, "inner")
                        || t.is(p, "outer")
                        || t.is(p, "cross")
                        || t.is(p, "natural")
                        || endsOperand(t, p);
            default:
                return false;
        }
    }

    /**
     * Whether token {@code p} can end an operand: a literal, parameter, quoted or plain identifier,
     * closing parenthesis or bracket, or a keyword such as {@code NULL} or {@code END}. Other keywords
     * (unreserved ones included, since e.g. {@code XMLPARSE(DOCUMENT f(x))} puts an expression after
     * one) do not count.
     */
    private static boolean endsOperand(Tokens t, int p) {
        switch (t.type[p]) {
            case STRING:
            case NUMBER:
            case PARAM:
            case QIDENT:
            case RPAREN:
            case RBRACKET:
                return true;
            case WORD:
                return BuiltinFunctions.KEYWORDS.get(t.sql, t.start[p], t.end[p]) == NameTable.ABSENT
                        || OPERAND_KEYWORDS.get(t.sql, t.start[p], t.end[p]) != NameTable.ABSENT
                        || t.type(p - 1) == DOT; // t.name: a column, whatever its name
            default:
                return false;
        }
    }

    /**
     * Whether token {@code p} is an unreserved keyword that is not known to introduce an expression,
     * so that it can only be a column name (such as {@code name} or {@code type}) ending an operand.
     */
    private static boolean isOperandKeyword(Tokens t, int p) {
        return t.type[p] == WORD
                && BuiltinFunctions.KEYWORDS.get(t.sql, t.start[p], t.end[p]) == BuiltinFunctions.KW_UNRESERVED
                && EXPRESSION_INTRODUCERS.get(t.sql, t.start[p], t.end[p]) == NameTable.ABSENT;
    }

    /**
     * Whether a CUBE or ROLLUP after token {@code p} stands in a GROUP BY list or a GROUPING SETS
     * list: right after {@code GROUP BY [ALL|DISTINCT]}, or after a comma or parenthesis whose list,
     * read backwards at the same depth without crossing another clause, starts there.
     */
    private static boolean inGroupingList(Tokens t, int from, int p) {
        if (t.is(p, "all") || t.is(p, "distinct")) {
            p--;
        }
        if (t.is(p, "by")) {
            return t.is(p - 1, "group");
        }
        if (t.type(p) != COMMA && t.type(p) != LPAREN) {
            return false;
        }
        for (int j = p; j >= from; j--) {
            final int type = t.type[j];
            if (type == RPAREN) {
                j = t.match[j];
                if (j < 0) {
                    return false;
                }
            } else if (type == LPAREN) {
                // The list's own parenthesis: only GROUPING SETS (…) holds CUBE and ROLLUP.
                return t.is(j - 1, "sets") && t.is(j - 2, "grouping");
            } else if (type == WORD) {
                if (t.is(j, "by")) {
                    return t.is(j - 1, "group"); // not ORDER BY, PARTITION BY
                }
                if (CLAUSE_KEYWORDS.get(t.sql, t.start[j], t.end[j]) != NameTable.ABSENT) {
                    return false;
                }
            }
        }
        return false;
    }

    private static NameTable flags(String... names) {
        int[] ones = new int[names.length];
        java.util.Arrays.fill(ones, 1);
        return new NameTable(names, ones);
    }
}
