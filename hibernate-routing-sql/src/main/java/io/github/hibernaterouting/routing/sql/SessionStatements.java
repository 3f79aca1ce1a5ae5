package io.github.hibernaterouting.routing.sql;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.DOT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.NUMBER;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.QIDENT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.STRING;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;

import io.github.hibernaterouting.routing.sql.Classification.Control;
import io.github.hibernaterouting.routing.sql.Classification.SettingScope;
import io.github.hibernaterouting.routing.sql.internal.SqlLexer;
import io.github.hibernaterouting.routing.sql.internal.Tokens;
import java.util.Locale;

/**
 * The statements a standby runs without writing, but whose effect stays on the connection or
 * decides the transaction: {@code SET} and {@code RESET} (with the {@link SettingScope} a router
 * must carry them for), the modes of {@code BEGIN}, {@code START TRANSACTION} and
 * {@code SET TRANSACTION}, {@code PREPARE} and {@code DECLARE … CURSOR} (as safe as the statement
 * they hold), and {@code COPY}, whose direction decides. Transaction and cursor statements also
 * report their {@link Control} (and cursor name). Each method takes the tokens after the
 * statement's keyword, unless it says otherwise; those that hold a statement classify it with
 * {@code statements}.
 */
final class SessionStatements {

    private static final Classification READ_ONLY = Classification.of(Reason.READ_ONLY);
    private static final Classification SESSION_STATE = Classification.of(Reason.SESSION_STATE);
    private static final Classification TRANSACTION_CONTROL = Classification.of(Reason.TRANSACTION_CONTROL);
    private static final Classification UNPARSEABLE = Classification.of(Reason.UNPARSEABLE);
    private static final Classification BEGIN =
            Classification.of(Reason.TRANSACTION_CONTROL, null, Control.BEGIN, null);
    private static final Classification BEGIN_READ_ONLY =
            Classification.of(Reason.TRANSACTION_CONTROL, null, Control.BEGIN_READ_ONLY, null);
    private static final Classification END = Classification.of(Reason.TRANSACTION_CONTROL, null, Control.END, null);
    static final Classification SAVEPOINT =
            Classification.of(Reason.TRANSACTION_CONTROL, null, Control.SAVEPOINT, null);
    private static final Classification CLOSE_ALL =
            Classification.of(Reason.SESSION_STATE, null, Control.CURSOR_CLOSE, null);

    private SessionStatements() {}

    /**
     * {@code SET …} without its keyword: a setting lasting the transaction or the session, unless
     * it makes the transaction read-write or serializable.
     */
    static Classification set(Tokens t, int from, int to) {
        int i = from;
        // SET LOCAL, SET TRANSACTION and SET CONSTRAINTS last until the transaction ends; SET and
        // SET SESSION (including SET SESSION CHARACTERISTICS, ROLE, AUTHORIZATION) until changed.
        final SettingScope scope = t.is(i, "local") || t.is(i, "transaction") || t.is(i, "constraints")
                ? SettingScope.TRANSACTION
                : SettingScope.SESSION;
        if (t.is(i, "session") || t.is(i, "local")) {
            i++;
        }
        final String name = settingName(t, i, to);
        // SET [SESSION|LOCAL] default_transaction_read_only / transaction_read_only = off: read-write.
        if (t.is(i, "transaction_read_only") || t.is(i, "default_transaction_read_only")) {
            int v = i + 1;
            if (t.is(v, "to")
                    || t.type(v) == SqlLexer.OP && t.end[v] - t.start[v] == 1 && t.sql.charAt(t.start[v]) == '=') {
                v++;
            }
            if (v < to
                    && (t.is(v, "on")
                            || t.is(v, "true")
                            || t.is(v, "yes")
                            || t.type[v] == NUMBER && t.sql.charAt(t.start[v]) == '1'
                            || t.type[v] == STRING && isTrueLiteral(t, v))) {
                return Classification.setting(scope, name);
            }
            return Classification.of(Reason.PRIMARY_ONLY_TRANSACTION, "READ WRITE");
        }
        Classification modes = transactionModes(t, i, to);
        return modes.replicaSafe() ? Classification.setting(scope, name) : modes;
    }

    /** {@code RESET …} without its keyword: a session setting. */
    static Classification reset(Tokens t, int from, int to) {
        return Classification.setting(SettingScope.SESSION, settingName(t, from, to));
    }

    /**
     * The lower-cased name a {@code SET} or {@code RESET} sets, dotted parts included
     * ({@code search_path}, {@code app.tenant}, {@code role}, {@code time} for {@code TIME ZONE},
     * {@code all} for {@code RESET ALL}); null if there is none.
     */
    private static String settingName(Tokens t, int i, int to) {
        if (i >= to || t.type[i] != WORD && t.type[i] != QIDENT) {
            return null;
        }
        StringBuilder name = new StringBuilder(Identifiers.folded(t, i));
        while (i + 2 < to && t.type[i + 1] == DOT && (t.type[i + 2] == WORD || t.type[i + 2] == QIDENT)) {
            name.append('.').append(Identifiers.folded(t, i + 2));
            i += 2;
        }
        return name.toString();
    }

    private static boolean isTrueLiteral(Tokens t, int i) {
        String v = t.sql.substring(t.start[i] + 1, t.end[i] - 1).trim().toLowerCase(Locale.ROOT);
        return v.equals("on") || v.equals("true") || v.equals("yes") || v.equals("1");
    }

    /** BEGIN / START TRANSACTION / SET TRANSACTION modes: serializable and read-write need the primary. */
    static Classification transactionModes(Tokens t, int from, int to) {
        for (int i = from; i < to; i++) {
            if (t.is(i, "serializable")
                    || t.type[i] == STRING && t.sql.regionMatches(true, t.start[i] + 1, "serializable", 0, 12)) {
                return Classification.of(Reason.PRIMARY_ONLY_TRANSACTION, "SERIALIZABLE");
            }
            if (t.is(i, "read") && t.is(i + 1, "write")) {
                return Classification.of(Reason.PRIMARY_ONLY_TRANSACTION, "READ WRITE");
            }
        }
        return TRANSACTION_CONTROL;
    }

    /**
     * {@code BEGIN} or {@code START TRANSACTION} without its keyword: {@link Control#BEGIN_READ_ONLY}
     * if its modes say {@code READ ONLY}, else {@link Control#BEGIN}, also when the standby refuses
     * the transaction (serializable, read-write) and the verdict is for the primary.
     */
    static Classification begin(Tokens t, int from, int to) {
        Classification modes = transactionModes(t, from, to);
        if (!modes.replicaSafe()) {
            return Classification.of(modes.reason(), modes.detail(), Control.BEGIN, null);
        }
        for (int i = from; i < to; i++) {
            if (t.is(i, "read") && t.is(i + 1, "only")) {
                return BEGIN_READ_ONLY;
            }
        }
        return BEGIN;
    }

    /**
     * {@code COMMIT}, {@code END}, {@code ROLLBACK} or {@code ABORT} at {@code from} (not
     * {@code … PREPARED}): {@link Control#END}, except {@code ROLLBACK [WORK|TRANSACTION] TO …}, a
     * savepoint, and {@code … AND CHAIN}, which at once begins the next transaction with the same
     * modes on the same connection and so reports no control.
     */
    static Classification end(Tokens t, int from, int to) {
        int i = from + 1;
        if (t.is(i, "work") || t.is(i, "transaction")) {
            i++;
        }
        if (t.is(from, "rollback") && t.is(i, "to")) {
            return SAVEPOINT;
        }
        if (t.is(i, "and") && t.is(i + 1, "chain")) {
            return TRANSACTION_CONTROL;
        }
        return END;
    }

    /** {@code PREPARE name [(types)] AS statement}, or {@code PREPARE TRANSACTION} (two-phase commit). */
    static Classification prepare(StatementClassifier statements, Tokens t, int from, int to) {
        if (t.is(from, "transaction")) {
            return Classification.of(Reason.PRIMARY_ONLY_TRANSACTION, "PREPARE TRANSACTION");
        }
        int i = from + 1; // the statement name
        if (i < to && t.type[i] == LPAREN) {
            i = t.match[i] + 1; // parameter types
            if (i <= 0) {
                return UNPARSEABLE;
            }
        }
        if (!t.is(i, "as")) {
            return UNPARSEABLE;
        }
        // Its EXECUTE will go to the primary if the body writes, so the PREPARE must go there too.
        Classification inner = statements.classifyStatement(t, i + 1, to);
        return inner.replicaSafe() ? SESSION_STATE : inner.withoutControl();
    }

    /**
     * {@code DECLARE name … CURSOR FOR query}: session state if the query is read-only, else the
     * query's verdict; either way {@link Control#CURSOR_OPEN} with the cursor's name.
     */
    static Classification declare(StatementClassifier statements, Tokens t, int from, int to) {
        for (int i = from; i < to; i++) {
            if (t.is(i, "for")) {
                Classification inner = statements.classifyStatement(t, i + 1, to);
                String name = cursorName(t, from, to);
                if (!inner.replicaSafe()) {
                    return Classification.of(inner.reason(), inner.detail(), Control.CURSOR_OPEN, name);
                }
                // The query runs where the cursor was declared, when it is fetched.
                Classification open = Classification.of(Reason.SESSION_STATE, null, Control.CURSOR_OPEN, name);
                return inner.dependsOnSearchPath() ? open.withSearchPathDependency() : open;
            }
        }
        return UNPARSEABLE;
    }

    /**
     * {@code FETCH} or {@code MOVE} without its keyword: session state, {@link Control#CURSOR_USE}.
     * Whatever the direction and count ({@code NEXT}, {@code FORWARD ALL}, {@code ABSOLUTE -1},
     * {@code 10}, …) the grammar ends the statement with the cursor's name, so {@code FETCH next}
     * fetches from a cursor named {@code next}.
     */
    static Classification fetch(Tokens t, int from, int to) {
        return Classification.of(Reason.SESSION_STATE, null, Control.CURSOR_USE, cursorName(t, to - 1, to));
    }

    /** {@code CLOSE name} or {@code CLOSE ALL} without its keyword: session state, {@link Control#CURSOR_CLOSE}. */
    static Classification close(Tokens t, int from, int to) {
        if (t.is(from, "all")) {
            return CLOSE_ALL;
        }
        return Classification.of(Reason.SESSION_STATE, null, Control.CURSOR_CLOSE, cursorName(t, from, to));
    }

    /** The case-folded cursor name at {@code i}, or null if there is no identifier there. */
    private static String cursorName(Tokens t, int i, int to) {
        if (i < 0 || i >= to || t.type[i] != WORD && t.type[i] != QIDENT) {
            return null;
        }
        if (t.type[i] == WORD
                && BuiltinFunctions.KEYWORDS.get(t.sql, t.start[i], t.end[i]) == BuiltinFunctions.KW_RESERVED) {
            return null; // FETCH ALL: a reserved word names no cursor (the server rejects the statement)
        }
        return Identifiers.folded(t, i);
    }

    /**
     * {@code COPY}: {@code TO STDOUT} is read-only if its query is; {@code FROM} writes, and
     * {@code TO} a server file or program is a utility for the primary.
     */
    static Classification copy(StatementClassifier statements, Tokens t, int from, int to) {
        int i = from;
        boolean searchPath = false;
        if (i < to && t.type[i] == LPAREN) {
            int close = t.match[i];
            if (close < 0 || close >= to) {
                return UNPARSEABLE;
            }
            Classification inner = statements.classifyStatement(t, i + 1, close);
            if (!inner.replicaSafe()) {
                return inner.withoutControl();
            }
            searchPath = inner.dependsOnSearchPath();
            i = close + 1;
        }
        for (; i < to; i++) {
            if (t.type[i] == LPAREN) {
                i = Math.max(i, t.match[i]);
                if (t.match[i] < 0) {
                    return UNPARSEABLE;
                }
            } else if (t.is(i, "from")) {
                return Classification.of(Reason.COPY_FROM);
            } else if (t.is(i, "to")) {
                if (t.is(i + 1, "stdout")) {
                    return searchPath ? READ_ONLY.withSearchPathDependency() : READ_ONLY;
                }
                return Classification.of(Reason.UTILITY, "COPY TO FILE"); // server file or PROGRAM
            }
        }
        return UNPARSEABLE;
    }
}
