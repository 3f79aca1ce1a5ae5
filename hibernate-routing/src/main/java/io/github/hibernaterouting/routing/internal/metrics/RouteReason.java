package io.github.hibernaterouting.routing.internal.metrics;

/** Why a statement went where it went; {@link #tag} is the {@code reason} tag of the meters. */
public enum RouteReason {
    /** A read on a replica, the normal case. */
    READ("read"),
    /** A read on a replica after this unit of work wrote, allowed by {@code STALE_READ}. */
    STALE_READ("stale-read"),
    /** The statement is not provably read-only. */
    WRITE("write"),
    /** A read on the primary because this unit of work, or its scope, wrote earlier. */
    ESCALATED("escalated"),
    /** A read on the primary because the effective strategy is {@code PRIMARY}. */
    STRATEGY("strategy"),
    /** A read on the primary because a query hint asked for it. */
    FORCED("forced"),
    /**
     * A read on the primary that checks what this unit of work read on a replica before it
     * overwrites it (the lost-update check), whatever the strategy.
     */
    VERIFY("verify"),
    /**
     * A read inside a transaction that is already on the primary, or pinned there by
     * {@code transactions=PRIMARY}; or, on any node, a statement of a transaction begun with SQL or on a
     * cursor, which runs on the connection that holds it.
     */
    TRANSACTION("transaction"),
    /**
     * A read on the primary because of the transaction's isolation level: a read-write transaction
     * above READ COMMITTED (one snapshot, on the server that runs its writes), or SERIALIZABLE, which a
     * hot standby refuses.
     */
    ISOLATION("isolation"),
    /**
     * A read on the primary because its unit of work changed session state the classifier cannot
     * follow: {@code standard_conforming_strings} (or {@code RESET ALL}), after which every statement
     * of the unit runs there, or {@code search_path}, after which reads that depend on it do.
     */
    SESSION_STATE("session-state"),
    /** Raw JDBC use whose SQL is not known up front ({@code createStatement}, {@code prepareCall}, savepoints, unwrap). */
    RAW_JDBC("raw-jdbc"),
    /** No replica could give a connection. */
    REPLICA_DOWN("replica-down"),
    /** The replica's pool had no free connection in time: every one in use, the server answering. */
    REPLICA_BUSY("replica-busy"),
    /** The replica is not a standby of this primary (another cluster or timeline). */
    FOREIGN_SERVER("foreign-server"),
    /**
     * The replica is reached through a connection pooler in transaction (or statement) mode that
     * spreads transactions over several standbys: no check can tell which one a read will run on.
     */
    TRANSACTION_POOLER("transaction-pooler"),
    /** Every reachable replica was over the lag bound. */
    LAG_BOUND("lag-bound"),
    /** The replica's lag data was older than the lag bound: its last health check did not answer in time. */
    LAG_UNKNOWN("lag-unknown"),
    /** A replica turned out not to be in recovery. */
    NOT_IN_RECOVERY("not-in-recovery"),
    /** No replica had replayed the caller's minimum LSN within the wait. */
    LSN_FALLBACK("lsn-fallback"),
    /** A replica reached the caller's minimum LSN after a wait. */
    LSN_WAIT("lsn-wait"),
    /** The actor has a mutation in flight (Redis marker pending), or the marker could not be read. */
    PENDING_WRITE("pending-write");

    public final String tag;

    RouteReason(String tag) {
        this.tag = tag;
    }
}
