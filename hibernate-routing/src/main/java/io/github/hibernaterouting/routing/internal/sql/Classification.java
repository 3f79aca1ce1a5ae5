package io.github.hibernaterouting.routing.internal.sql;

import java.util.Objects;

/**
 * The immutable verdict of {@link SqlClassifier} for one SQL string.
 *
 * <p>Detail-less verdicts are shared instances, so classifying from the memo allocates nothing.
 * {@link #detail()} may carry a function name or SQL keyword but never a literal or parameter
 * value from the statement.
 */
public final class Classification {

    private static final Classification[] SHARED = new Classification[Reason.values().length];

    static {
        for (Reason r : Reason.values()) {
            SHARED[r.ordinal()] = new Classification(r, null, null);
        }
    }

    private final Reason reason;
    private final String detail;
    private final String routingHint;

    private Classification(Reason reason, String detail, String routingHint) {
        this.reason = reason;
        this.detail = detail;
        this.routingHint = routingHint;
    }

    /** The shared, detail-less verdict for {@code reason}. */
    static Classification of(Reason reason) {
        return SHARED[reason.ordinal()];
    }

    /** A verdict with a detail (a keyword or function name); shared if {@code detail} is null. */
    static Classification of(Reason reason, String detail) {
        return detail == null ? of(reason) : new Classification(reason, detail, null);
    }

    /** This verdict carrying the value of a leading routing hint comment. */
    Classification withRoutingHint(String hint) {
        return hint == null ? this : new Classification(reason, detail, hint);
    }

    /** True only if the statement is proven safe to run on a hot standby. */
    public boolean replicaSafe() {
        return reason.replicaSafe();
    }

    /** Why; low cardinality, usable as a metrics tag. */
    public Reason reason() {
        return reason;
    }

    /** E.g. {@code "nextval"}, {@code "INSERT"}, {@code "FOR UPDATE"}; may be null. */
    public String detail() {
        return detail;
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
                && Objects.equals(routingHint, c.routingHint);
    }

    @Override
    public int hashCode() {
        return Objects.hash(reason, detail, routingHint);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(replicaSafe() ? "REPLICA(" : "PRIMARY(").append(reason);
        if (detail != null) {
            sb.append(": ").append(detail);
        }
        if (routingHint != null) {
            sb.append(", hint=").append(routingHint);
        }
        return sb.append(')').toString();
    }
}
