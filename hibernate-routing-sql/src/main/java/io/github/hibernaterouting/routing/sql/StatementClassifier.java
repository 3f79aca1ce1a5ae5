package io.github.hibernaterouting.routing.sql;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.COMMA;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.DOT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.NUMBER;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.OP;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.QIDENT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.RPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.SEMI;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;

import io.github.hibernaterouting.routing.sql.Classification.SettingScope;
import io.github.hibernaterouting.routing.sql.internal.NameTable;
import io.github.hibernaterouting.routing.sql.internal.Tokens;
import java.util.Locale;

/**
 * The walk over a tokenized script behind {@link SqlClassifier}: splits it at semicolons, takes
 * each statement's kind from its first keyword, and searches queries at every parenthesis depth
 * for data-modifying CTEs, locking clauses, {@code SELECT … INTO} and function calls (judged by
 * {@link FunctionCalls}). Stateless apart from the function knowledge, so one instance serves all
 * threads; it allocates only the verdicts that carry a detail.
 */
final class StatementClassifier {

    private static final Classification READ_ONLY = Classification.of(Reason.READ_ONLY);
    private static final Classification READ_ONLY_SEARCH_PATH = READ_ONLY.withSearchPathDependency();
    private static final Classification SESSION_STATE = Classification.of(Reason.SESSION_STATE);
    private static final Classification EMPTY = Classification.of(Reason.EMPTY);
    private static final Classification UNPARSEABLE = Classification.of(Reason.UNPARSEABLE);
    private static final Classification FOR_UPDATE = Classification.of(Reason.LOCKING_CLAUSE, "FOR UPDATE");
    private static final Classification FOR_NO_KEY_UPDATE =
            Classification.of(Reason.LOCKING_CLAUSE, "FOR NO KEY UPDATE");
    private static final Classification FOR_SHARE = Classification.of(Reason.LOCKING_CLAUSE, "FOR SHARE");
    private static final Classification FOR_KEY_SHARE = Classification.of(Reason.LOCKING_CLAUSE, "FOR KEY SHARE");
    private static final Classification SELECT_INTO = Classification.of(Reason.SELECT_INTO, "INTO");
    private static final Classification UNKNOWN_ESCAPE = Classification.of(Reason.UNPARSEABLE, "unknown JDBC escape");

    // Statement kinds, keyed by the first keyword.
    private static final int K_QUERY = 1;
    private static final int K_SHOW = 2;
    private static final int K_EXPLAIN = 3;
    private static final int K_DML = 4;
    private static final int K_DDL = 5;
    private static final int K_SET = 6;
    private static final int K_RESET = 7;
    private static final int K_BEGIN = 8;
    private static final int K_END = 9;
    private static final int K_SAVEPOINT = 10;
    private static final int K_PREPARE = 11;
    private static final int K_EXECUTE = 12;
    private static final int K_SESSION = 13;
    private static final int K_DECLARE = 14;
    private static final int K_CALL = 15;
    private static final int K_DO = 16;
    private static final int K_COPY = 17;
    private static final int K_LOCK = 18;
    private static final int K_UTILITY = 19;
    private static final int K_CURSOR_USE = 20;
    private static final int K_CLOSE = 21;
    private static final int K_DISCARD = 22;

    private static final NameTable STATEMENT_KINDS = statementKinds();

    private final FunctionCalls functionCalls;

    StatementClassifier(FunctionCatalog catalog) {
        this.functionCalls = new FunctionCalls(catalog);
    }

    /** The verdict on a whole token stream: each statement between semicolons must be replica-safe. */
    Classification classifyScript(Tokens t) {
        Classification first = null;
        boolean searchPath = false;
        int pieces = 0;
        int from = 0;
        for (int i = 0; i <= t.count; i++) {
            if (i == t.count || t.type[i] == SEMI) {
                if (i > from) {
                    Classification c = classifyStatement(t, from, i);
                    pieces++;
                    if (!c.replicaSafe()) {
                        if (pieces > 1 || hasMoreStatements(t, i)) {
                            return Classification.of(
                                    Reason.MULTIPLE_STATEMENTS,
                                    c.detail() == null ? c.reason().name() : c.reason() + " " + c.detail());
                        }
                        return c;
                    }
                    searchPath |= c.dependsOnSearchPath();
                    if (first == null
                            || first.reason() == Reason.READ_ONLY
                            || c.settingScope().compareTo(first.settingScope()) > 0) {
                        // A script that sets anything is carried over as a whole, for its longest-lasting setting.
                        first = c;
                    }
                }
                from = i + 1;
            }
        }
        if (first == null) {
            return EMPTY;
        }
        if (pieces == 1) {
            return first;
        }
        // A script's settings are carried as the whole script, under no single parameter's name, and
        // it does not report the control of any one statement: its control is NONE.
        Classification script = first.settingScope() != SettingScope.NONE
                ? Classification.setting(first.settingScope(), null)
                : first.withoutControl();
        return searchPath ? script.withSearchPathDependency() : script;
    }

    private static boolean hasMoreStatements(Tokens t, int semi) {
        for (int i = semi; i < t.count; i++) {
            if (t.type[i] != SEMI) {
                return true;
            }
        }
        return false;
    }

    /** Classifies tokens {@code [from, to)}, one statement without its terminating semicolon. */
    Classification classifyStatement(Tokens t, int from, int to) {
        if (from >= to) {
            return UNPARSEABLE;
        }
        if (t.type[from] == LPAREN) {
            return query(t, from, to);
        }
        if (JdbcEscapes.isOpenBrace(t, from)) {
            int call = JdbcEscapes.callKeyword(t, from, to);
            return call < 0 ? UNPARSEABLE : Classification.of(Reason.CALL, procedureName(t, call + 1, to));
        }
        if (t.type[from] != WORD) {
            return UNPARSEABLE;
        }
        int kind = STATEMENT_KINDS.get(t.sql, t.start[from], t.end[from]);
        switch (kind) {
            case K_QUERY:
                return query(t, from, to);
            case K_SHOW:
                return READ_ONLY;
            case K_EXPLAIN:
                return explain(t, from + 1, to);
            case K_DML:
                return Classification.of(Reason.DML, verb(t, from));
            case K_DDL:
                return Classification.of(Reason.DDL, verb(t, from));
            case K_SET:
                return SessionStatements.set(t, from + 1, to);
            case K_RESET:
                return SessionStatements.reset(t, from + 1, to);
            case K_BEGIN:
                return SessionStatements.begin(t, from + 1, to);
            case K_END:
                if (t.is(from + 1, "prepared")) {
                    return Classification.of(Reason.PRIMARY_ONLY_TRANSACTION, verb(t, from) + " PREPARED");
                }
                return SessionStatements.end(t, from, to);
            case K_SAVEPOINT:
                return SessionStatements.SAVEPOINT;
            case K_PREPARE:
                return SessionStatements.prepare(this, t, from + 1, to);
            case K_EXECUTE:
                return Classification.of(Reason.UTILITY, "EXECUTE");
            case K_SESSION:
                return SESSION_STATE;
            case K_DISCARD:
                return Classification.of(
                        Reason.SESSION_RESET, from + 1 < to && t.type[from + 1] == WORD ? verb(t, from + 1) : null);
            case K_DECLARE:
                return SessionStatements.declare(this, t, from + 1, to);
            case K_CURSOR_USE:
                return SessionStatements.fetch(t, from + 1, to);
            case K_CLOSE:
                return SessionStatements.close(t, from + 1, to);
            case K_CALL:
                return Classification.of(Reason.CALL, procedureName(t, from + 1, to));
            case K_DO:
                return Classification.of(Reason.DO_BLOCK);
            case K_COPY:
                return SessionStatements.copy(this, t, from + 1, to);
            case K_LOCK:
                return Classification.of(Reason.LOCK);
            case K_UTILITY:
                return Classification.of(Reason.UTILITY, verb(t, from));
            default:
                return UNPARSEABLE;
        }
    }

    /**
     * A SELECT, VALUES, TABLE or WITH statement (or one in parentheses): read-only unless some
     * token at any depth proves otherwise.
     */
    private Classification query(Tokens t, int from, int to) {
        int depth = 0;
        boolean searchPath = false;
        for (int i = from; i < to; i++) {
            int type = t.type[i];
            if (type == LPAREN) {
                depth++;
            } else if (type == RPAREN) {
                depth--;
            } else if (type == WORD) {
                int len = t.end[i] - t.start[i];
                if (len == 3 && t.is(i, "for")) {
                    Classification lock = lockingClause(t, i + 1);
                    if (lock != null) {
                        return lock;
                    }
                } else if (len == 4 && t.is(i, "into")) {
                    return SELECT_INTO;
                } else if (len >= 5
                        && len <= 6
                        && (t.is(i, "insert") || t.is(i, "update") || t.is(i, "delete") || t.is(i, "merge"))) {
                    // Also catches an unquoted column named "update": a missed offload, never a leak.
                    return Classification.of(depth == 0 ? Reason.DML : Reason.DATA_MODIFYING_CTE, verb(t, i));
                } else if (len >= 14 && callsCurrentSchema(t, i)) {
                    searchPath = true;
                }
                Classification f = i > from && t.type[i - 1] == DOT
                        ? functionCalls.attributeCall(t, from, i, to)
                        : functionCalls.functionCall(t, from, i, to);
                if (f != null) {
                    return f;
                }
            } else if (type == QIDENT) {
                searchPath |= callsCurrentSchema(t, i);
                Classification f = i > from && t.type[i - 1] == DOT
                        ? functionCalls.attributeCall(t, from, i, to)
                        : functionCalls.functionCall(t, from, i, to);
                if (f != null) {
                    return f;
                }
            } else if (type == OP && JdbcEscapes.isOpenBrace(t, i)) {
                if (!JdbcEscapes.isKnown(t, i)) {
                    return UNKNOWN_ESCAPE;
                }
                int translated = JdbcEscapes.translatedFunction(t, i);
                if (translated > 0) {
                    i = translated; // pgjdbc replaces {fn ucase(…)} & co. with read-only SQL; the arguments still count
                }
            }
        }
        return searchPath ? READ_ONLY_SEARCH_PATH : READ_ONLY;
    }

    /**
     * Whether identifier token {@code i} is {@code current_schema} or {@code current_schemas}
     * (unquoted in any case, or quoted in lower case). With {@code pg_temp} first in
     * {@code search_path}, calling either creates the session's temporary schema.
     */
    private static boolean callsCurrentSchema(Tokens t, int i) {
        if (t.type[i] == WORD) {
            return t.is(i, "current_schema") || t.is(i, "current_schemas");
        }
        int s = t.start[i];
        int len = t.end[i] - s - 2;
        return t.type[i] == QIDENT
                && t.sql.charAt(s) == '"'
                && (len == 14 || len == 15)
                && t.sql.regionMatches(s + 1, "current_schemas", 0, len);
    }

    /** The (first part of the) name of the procedure a {@code CALL} at {@code i} names, or null. */
    private static String procedureName(Tokens t, int i, int to) {
        return i < to && (t.type[i] == WORD || t.type[i] == QIDENT) ? Identifiers.folded(t, i) : null;
    }

    private static Classification lockingClause(Tokens t, int i) {
        if (t.is(i, "update")) {
            return FOR_UPDATE;
        }
        if (t.is(i, "share")) {
            return FOR_SHARE;
        }
        if (t.is(i, "no") && t.is(i + 1, "key") && t.is(i + 2, "update")) {
            return FOR_NO_KEY_UPDATE;
        }
        if (t.is(i, "key") && t.is(i + 1, "share")) {
            return FOR_KEY_SHARE;
        }
        return null;
    }

    private Classification explain(Tokens t, int from, int to) {
        boolean analyze = false;
        int i = from;
        if (i < to && t.type[i] == LPAREN) {
            int close = t.match[i];
            if (close < 0 || close >= to) {
                return UNPARSEABLE;
            }
            for (int j = i + 1; j < close; j++) {
                if ((j == i + 1 || t.type[j - 1] == COMMA) && (t.is(j, "analyze") || t.is(j, "analyse"))) {
                    boolean off = t.type[j + 1] != COMMA
                            && j + 1 < close
                            && (t.is(j + 1, "false")
                                    || t.is(j + 1, "off")
                                    || t.is(j + 1, "no")
                                    || t.type[j + 1] == NUMBER
                                            && t.end[j + 1] - t.start[j + 1] == 1
                                            && t.sql.charAt(t.start[j + 1]) == '0');
                    analyze = !off;
                }
            }
            i = close + 1;
        } else {
            while (i < to && (t.is(i, "analyze") || t.is(i, "analyse") || t.is(i, "verbose"))) {
                analyze |= !t.is(i, "verbose");
                i++;
            }
        }
        if (i >= to) {
            return UNPARSEABLE;
        }
        if (!analyze) {
            // Plain EXPLAIN plans but never executes, though planning may evaluate a STABLE call.
            for (int j = i; j < to; j++) {
                if ((t.type[j] == WORD || t.type[j] == QIDENT) && callsCurrentSchema(t, j)) {
                    return READ_ONLY_SEARCH_PATH;
                }
            }
            return READ_ONLY;
        }
        Classification inner = classifyStatement(t, i, to);
        if (inner.replicaSafe()) {
            return inner.withoutControl(); // EXPLAIN ANALYZE DECLARE runs the query but opens no cursor
        }
        return Classification.of(
                Reason.EXPLAIN_ANALYZE_WRITE,
                inner.detail() != null ? inner.detail() : inner.reason().name());
    }

    /** The keyword at {@code i} in upper case, for details (a small, fixed vocabulary). */
    private static String verb(Tokens t, int i) {
        return t.text(i).toUpperCase(Locale.ROOT);
    }

    private static NameTable statementKinds() {
        Object[][] kinds = {
            {K_QUERY, "select", "with", "values", "table"},
            {K_SHOW, "show"},
            {K_EXPLAIN, "explain"},
            {K_DML, "insert", "update", "delete", "merge", "truncate"},
            {K_DDL, "create", "alter", "drop", "comment", "grant", "revoke", "security", "import", "reassign", "refresh"
            },
            {K_SET, "set"},
            {K_RESET, "reset"},
            {K_BEGIN, "begin", "start"},
            {K_END, "commit", "end", "rollback", "abort"},
            {K_SAVEPOINT, "savepoint", "release"},
            {K_PREPARE, "prepare"},
            {K_EXECUTE, "execute"},
            {K_SESSION, "deallocate", "unlisten"},
            {K_DISCARD, "discard"},
            {K_CURSOR_USE, "fetch", "move"},
            {K_CLOSE, "close"},
            {K_DECLARE, "declare"},
            {K_CALL, "call"},
            {K_DO, "do"},
            {K_COPY, "copy"},
            {K_LOCK, "lock"},
            {K_UTILITY, "vacuum", "analyze", "analyse", "cluster", "reindex", "checkpoint", "listen", "notify", "load"},
        };
        int n = 0;
        for (Object[] k : kinds) {
            n += k.length - 1;
        }
        String[] names = new String[n];
        int[] values = new int[n];
        int j = 0;
        for (Object[] k : kinds) {
            for (int m = 1; m < k.length; m++) {
                names[j] = (String) k[m];
                values[j++] = (Integer) k[0];
            }
        }
        return new NameTable(names, values);
    }
}
