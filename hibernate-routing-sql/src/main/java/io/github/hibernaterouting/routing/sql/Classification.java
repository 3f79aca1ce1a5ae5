package io.github.hibernaterouting.routing.sql;

import java.util.Objects;

/**
 * The immutable verdict of {@link SqlClassifier} for one SQL string.
 *
 * <p>Detail-less verdicts are shared instances (one per {@link Reason} and {@link Control}), so
 * classifying from the memo allocates nothing; only a detail or a cursor name makes a new one.
 * {@link #detail()} may carry a function name or SQL keyword but never a literal or parameter
 * value from the statement.
 */
public final class Classification {

    /**
     * How long a {@code SET} or {@code RESET} lasts on the connection that ran it. A router that
     * spreads one unit of work over several connections carries such statements over to each of
     * them.
     */
    public enum SettingScope {
        /** Not a configuration setting (a query, a cursor, {@code PREPARE}, {@code DISCARD}, …). */
        NONE,
        /** Until the transaction ends: {@code SET LOCAL}, {@code SET TRANSACTION}, {@code SET CONSTRAINTS}. */
        TRANSACTION,
        /** Until the connection changes it again: {@code SET}, {@code SET SESSION}, {@code RESET}, {@code SET ROLE}. */
        SESSION
    }

    /**
     * What a statement does to the transaction or to a cursor, for routers that follow a unit of
     * work across connections. It is reported whatever the verdict: a {@code BEGIN} the standby
     * refuses (serializable, read-write) goes to the primary but still reports {@link #BEGIN}, and a
     * cursor over a locking query reports {@link #CURSOR_OPEN}.
     */
    public enum Control {
        /** Neither: a query, a setting, any other statement, or a script of several statements. */
        NONE,
        /** {@code BEGIN} or {@code START TRANSACTION}, except a read-only one. */
        BEGIN,
        /**
         * {@code BEGIN} or {@code START TRANSACTION} whose modes say {@code READ ONLY} and neither
         * {@code SERIALIZABLE} nor {@code READ WRITE} (such a one goes to the primary and reports
         * {@link #BEGIN}).
         */
        BEGIN_READ_ONLY,
        /**
         * {@code COMMIT}, {@code END}, {@code ROLLBACK} or {@code ABORT}: the transaction is over. Not
         * {@code ROLLBACK TO} (a {@link #SAVEPOINT}), nor {@code COMMIT}/{@code ROLLBACK PREPARED}
         * (which end another, prepared transaction), nor {@code … AND CHAIN}, which starts the next
         * transaction on the same connection at once and so reports {@link #NONE}.
         */
        END,
        /** {@code SAVEPOINT}, {@code RELEASE [SAVEPOINT]} or {@code ROLLBACK TO [SAVEPOINT]}. */
        SAVEPOINT,
        /** {@code DECLARE name … CURSOR FOR …}; {@link Classification#cursorName()} names it. */
        CURSOR_OPEN,
        /**
         * {@code FETCH} or {@code MOVE}, with any direction and count; {@link Classification#cursorName()}
         * names the cursor.
         */
        CURSOR_USE,
        /** {@code CLOSE name} ({@link Classification#cursorName()} names it) or {@code CLOSE ALL} (no name). */
        CURSOR_CLOSE
    }

    private static final Control[] CONTROLS = Control.values();

    /**
     * The detail-less verdicts without a setting scope or cursor name: one per (reason, control), and
     * for the replica-safe reasons a second one that {@link #dependsOnSearchPath()}.
     */
    private static final Classification[][] SHARED = new Classification[Reason.values().length][CONTROLS.length];

    private static final Classification[][] SHARED_SEARCH_PATH =
            new Classification[Reason.values().length][CONTROLS.length];

    static {
        for (Reason r : Reason.values()) {
            for (Control k : CONTROLS) {
                SHARED[r.ordinal()][k.ordinal()] =
                        new Classification(r, null, null, SettingScope.NONE, k, null, false, false);
                SHARED_SEARCH_PATH[r.ordinal()][k.ordinal()] = r.replicaSafe()
                        ? new Classification(r, null, null, SettingScope.NONE, k, null, true, false)
                        : SHARED[r.ordinal()][k.ordinal()];
            }
        }
    }

    private static final Classification TRANSACTION_SETTING = new Classification(
            Reason.SESSION_STATE, null, null, SettingScope.TRANSACTION, Control.NONE, null, false, false);
    private static final Classification SESSION_SETTING = new Classification(
            Reason.SESSION_STATE, null, null, SettingScope.SESSION, Control.NONE, null, false, false);

    private final Reason reason;
    private final String detail;
    private final String routingHint;
    private final SettingScope settingScope;
    private final Control control;
    private final String cursorName;
    private final boolean dependsOnSearchPath;
    private final boolean temporaryObject;

    private Classification(
            Reason reason,
            String detail,
            String routingHint,
            SettingScope settingScope,
            Control control,
            String cursorName,
            boolean dependsOnSearchPath,
            boolean temporaryObject) {
        this.reason = reason;
        this.detail = detail;
        this.routingHint = routingHint;
        this.settingScope = settingScope;
        this.control = control;
        this.cursorName = cursorName;
        this.dependsOnSearchPath = dependsOnSearchPath;
        this.temporaryObject = temporaryObject;
    }

    /** The shared, detail-less verdict for {@code reason}. */
    static Classification of(Reason reason) {
        return SHARED[reason.ordinal()][Control.NONE.ordinal()];
    }

    /** A verdict with a detail (a keyword or function name); shared if {@code detail} is null. */
    static Classification of(Reason reason, String detail) {
        return of(reason, detail, Control.NONE, null);
    }

    /**
     * A verdict on a transaction or cursor statement; shared if it has neither {@code detail} nor
     * {@code cursorName}.
     */
    static Classification of(Reason reason, String detail, Control control, String cursorName) {
        return detail == null && cursorName == null
                ? SHARED[reason.ordinal()][control.ordinal()]
                : new Classification(reason, detail, null, SettingScope.NONE, control, cursorName, false, false);
    }

    /**
     * The verdict for a replica-safe {@code SET} or {@code RESET} lasting {@code scope}; its detail
     * is the name of the parameter it sets ({@code name}, may be null), never the value.
     */
    static Classification setting(SettingScope scope, String name) {
        if (name != null && scope != SettingScope.NONE) {
            return new Classification(Reason.SESSION_STATE, name, null, scope, Control.NONE, null, false, false);
        }
        return switch (scope) {
            case NONE -> of(Reason.SESSION_STATE);
            case TRANSACTION -> TRANSACTION_SETTING;
            case SESSION -> SESSION_SETTING;
        };
    }

    /** This verdict carrying the value of a leading routing hint comment. */
    Classification withRoutingHint(String hint) {
        return hint == null
                ? this
                : new Classification(
                        reason, detail, hint, settingScope, control, cursorName, dependsOnSearchPath, temporaryObject);
    }

    /**
     * This verdict for a statement that calls {@code current_schema} or {@code current_schemas}: the
     * same, but {@link #dependsOnSearchPath()} if it is replica-safe; a verdict for the primary is
     * returned as it is.
     */
    Classification withSearchPathDependency() {
        if (dependsOnSearchPath || !replicaSafe()) {
            return this;
        }
        return detail == null && routingHint == null && settingScope == SettingScope.NONE && cursorName == null
                ? SHARED_SEARCH_PATH[reason.ordinal()][control.ordinal()]
                : new Classification(
                        reason, detail, routingHint, settingScope, control, cursorName, true, temporaryObject);
    }

    /**
     * This verdict for a statement that creates a temporary object ({@link #createsTemporaryObject()});
     * only verdicts for the primary are given it, so it is never a shared one.
     */
    Classification withTemporaryObject() {
        return temporaryObject || replicaSafe()
                ? this
                : new Classification(
                        reason, detail, routingHint, settingScope, control, cursorName, dependsOnSearchPath, true);
    }

    /**
     * This verdict as part of an enclosing statement or script, which as a whole neither begins nor
     * ends a transaction nor opens, uses or closes a cursor: {@link Control#NONE}, no cursor name.
     */
    Classification withoutControl() {
        if (control == Control.NONE && cursorName == null) {
            return this;
        }
        Classification plain = routingHint == null && settingScope == SettingScope.NONE
                ? of(reason, detail)
                : new Classification(
                        reason, detail, routingHint, settingScope, Control.NONE, null, false, temporaryObject);
        return dependsOnSearchPath ? plain.withSearchPathDependency() : plain;
    }

    /** True only if the statement is proven safe to run on a hot standby. */
    public boolean replicaSafe() {
        return reason.replicaSafe();
    }

    /** Why; low cardinality, usable as a metrics tag. */
    public Reason reason() {
        return reason;
    }

    /**
     * E.g. {@code "nextval"}, {@code "INSERT"}, {@code "FOR UPDATE"}, or for a setting the
     * parameter's name ({@code "search_path"}, {@code "standard_conforming_strings"}, {@code "all"}
     * for {@code RESET ALL}); may be null. A script of several statements that sets something has
     * no detail: it may set any parameter.
     */
    public String detail() {
        return detail;
    }

    /**
     * For a replica-safe {@code SET} or {@code RESET}: how long its effect lasts on the connection
     * that ran it; {@link SettingScope#NONE} for every other statement.
     */
    public SettingScope settingScope() {
        return settingScope;
    }

    /**
     * What the statement does to the transaction or to a cursor ({@link Control}); {@link Control#NONE}
     * for every other statement and for any script of several statements.
     */
    public Control control() {
        return control;
    }

    /**
     * For {@link Control#CURSOR_OPEN}, {@link Control#CURSOR_USE} and {@link Control#CURSOR_CLOSE}:
     * the cursor's name, case-folded as PostgreSQL does (unquoted lower-cased, quoted verbatim), so
     * that a router can send every statement on a cursor to the connection that opened it; null for
     * {@code CLOSE ALL} and for every other statement.
     */
    public String cursorName() {
        return cursorName;
    }

    /**
     * True for a replica-safe statement that calls {@code current_schema} or
     * {@code current_schemas} (with or without parentheses, also in a cursor's query, under
     * {@code EXPLAIN} or in any statement of a script). With {@code pg_temp} first in
     * {@code search_path} those functions create the session's temporary schema, a write a standby
     * refuses, so a router sends such a statement to the primary when its unit of work has changed
     * {@code search_path}. False for every statement that goes to the primary anyway. Says nothing
     * about values: {@link #detail()} stays as it would be without the call.
     */
    public boolean dependsOnSearchPath() {
        return dependsOnSearchPath;
    }

    /**
     * True for a statement that creates a temporary table, view or sequence, or any object in the
     * session's temporary schema: {@code CREATE [GLOBAL|LOCAL] TEMP|TEMPORARY …} (also {@code OR
     * REPLACE}, {@code RECURSIVE}, {@code … AS}), {@code SELECT … INTO [GLOBAL|LOCAL] TEMP|TEMPORARY …},
     * and any statement that names a schema {@code pg_temp} or {@code pg_temp_N} and creates
     * something ({@code CREATE}, {@code SELECT … INTO}), in any statement of a script. Such an object
     * exists only on the connection that created it, and from then on an unqualified name there may
     * mean it rather than a permanent table of the same name: a router keeps the reads of a unit of
     * work that created one where it was created. Always false for a replica-safe verdict (these
     * statements write). Not seen: a temporary object created inside a function, a procedure or a
     * {@code DO} block, or by a plain {@code CREATE} after {@code search_path} put {@code pg_temp} first.
     */
    public boolean createsTemporaryObject() {
        return temporaryObject;
    }

    /**
     * The trimmed value of {@code hibernate.routing.strategy=VALUE} in a leading {@code /*+ … *&#47;}
     * hint comment (as written, e.g. {@code "PRIMARY"}), or null. The classifier does not interpret it.
     */
    public String routingHint() {
        return routingHint;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Classification c
                && reason == c.reason
                && Objects.equals(detail, c.detail)
                && Objects.equals(routingHint, c.routingHint)
                && settingScope == c.settingScope
                && control == c.control
                && Objects.equals(cursorName, c.cursorName)
                && dependsOnSearchPath == c.dependsOnSearchPath
                && temporaryObject == c.temporaryObject;
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                reason, detail, routingHint, settingScope, control, cursorName, dependsOnSearchPath, temporaryObject);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(replicaSafe() ? "REPLICA(" : "PRIMARY(").append(reason);
        if (detail != null) {
            sb.append(": ").append(detail);
        }
        if (settingScope != SettingScope.NONE) {
            sb.append(", ").append(settingScope).append(" setting");
        }
        if (control != Control.NONE) {
            sb.append(", ").append(control);
            if (cursorName != null) {
                sb.append(' ').append(cursorName);
            }
        }
        if (dependsOnSearchPath) {
            sb.append(", depends on search_path");
        }
        if (temporaryObject) {
            sb.append(", creates a temporary object");
        }
        if (routingHint != null) {
            sb.append(", hint=").append(routingHint);
        }
        return sb.append(')').toString();
    }
}
