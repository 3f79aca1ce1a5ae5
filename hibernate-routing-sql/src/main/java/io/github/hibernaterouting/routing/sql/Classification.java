package io.github.hibernaterouting.routing.sql;

import java.util.Objects;

/**
 * The immutable verdict of {@link SqlClassifier} for one SQL string.
 *
 * <p>Detail-less verdicts are shared instances, so classifying from the memo allocates nothing.
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

    private static final Classification[] SHARED = new Classification[Reason.values().length];

    static {
        for (Reason r : Reason.values()) {
            SHARED[r.ordinal()] = new Classification(r, null, null, SettingScope.NONE);
        }
    }

    private static final Classification TRANSACTION_SETTING =
            new Classification(Reason.SESSION_STATE, null, null, SettingScope.TRANSACTION);
    private static final Classification SESSION_SETTING =
            new Classification(Reason.SESSION_STATE, null, null, SettingScope.SESSION);

    private final Reason reason;
    private final String detail;
    private final String routingHint;
    private final SettingScope settingScope;

    private Classification(Reason reason, String detail, String routingHint, SettingScope settingScope) {
        this.reason = reason;
        this.detail = detail;
        this.routingHint = routingHint;
        this.settingScope = settingScope;
    }

    /** The shared, detail-less verdict for {@code reason}. */
    static Classification of(Reason reason) {
        return SHARED[reason.ordinal()];
    }

    /** A verdict with a detail (a keyword or function name); shared if {@code detail} is null. */
    static Classification of(Reason reason, String detail) {
        return detail == null ? of(reason) : new Classification(reason, detail, null, SettingScope.NONE);
    }

    /**
     * The verdict for a replica-safe {@code SET} or {@code RESET} lasting {@code scope}; its detail
     * is the name of the parameter it sets ({@code name}, may be null), never the value.
     */
    static Classification setting(SettingScope scope, String name) {
        if (name != null && scope != SettingScope.NONE) {
            return new Classification(Reason.SESSION_STATE, name, null, scope);
        }
        return switch (scope) {
            case NONE -> of(Reason.SESSION_STATE);
            case TRANSACTION -> TRANSACTION_SETTING;
            case SESSION -> SESSION_SETTING;
        };
    }

    /** This verdict carrying the value of a leading routing hint comment. */
    Classification withRoutingHint(String hint) {
        return hint == null ? this : new Classification(reason, detail, hint, settingScope);
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
     * parameter's name ({@code "search_path"}); may be null.
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
                && settingScope == c.settingScope;
    }

    @Override
    public int hashCode() {
        return Objects.hash(reason, detail, routingHint, settingScope);
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
        if (routingHint != null) {
            sb.append(", hint=").append(routingHint);
        }
        return sb.append(')').toString();
    }
}
