package io.github.hibernaterouting.routing.sql;

/**
 * Why a statement was classified the way it was; a small, fixed set suitable as a metrics tag.
 *
 * <p>Each reason implies one routing answer ({@link #replicaSafe()}): {@link #READ_ONLY},
 * {@link #SESSION_STATE} and {@link #TRANSACTION_CONTROL} are replica-safe, every other reason
 * sends the statement to the primary.
 */
public enum Reason {
    /** Proven read-only: a query, {@code SHOW}, {@code EXPLAIN} without {@code ANALYZE}, {@code COPY … TO STDOUT}. */
    READ_ONLY(true),
    /**
     * Changes only connection-local state that a hot standby accepts ({@code SET}, {@code RESET},
     * {@code SET ROLE}, {@code PREPARE} of a read-only statement, cursors over read-only queries,
     * {@code DEALLOCATE}, {@code UNLISTEN}). Safe to run on a replica, but the
     * state stays on the connection that ran it: a router that later moves the unit of work to
     * another connection must carry it over; {@link Classification#settingScope()} says which
     * statements are settings and how long they last.
     */
    SESSION_STATE(true),
    /**
     * {@code BEGIN}/{@code START TRANSACTION} (not serializable, not read-write), {@code COMMIT},
     * {@code ROLLBACK}, savepoints: a standby runs them, and they write nothing by themselves.
     */
    TRANSACTION_CONTROL(true),
    /** {@code INSERT}, {@code UPDATE}, {@code DELETE}, {@code MERGE}, {@code TRUNCATE}; detail is the verb. */
    DML(false),
    /** {@code CREATE}, {@code ALTER}, {@code DROP}, {@code GRANT}, {@code COMMENT}, …; detail is the verb. */
    DDL(false),
    /** A {@code WITH} query whose CTE (at any depth) inserts, updates, deletes or merges. */
    DATA_MODIFYING_CTE(false),
    /** {@code FOR UPDATE}, {@code FOR NO KEY UPDATE}, {@code FOR SHARE} or {@code FOR KEY SHARE} anywhere in a query. */
    LOCKING_CLAUSE(false),
    /** {@code SELECT … INTO new_table}, which creates a table. */
    SELECT_INTO(false),
    /**
     * A built-in function that writes, takes session-bound state or locks, or refuses to run during
     * recovery (nextval, advisory locks, pg_current_wal_lsn, …); detail is its name.
     */
    WRITING_FUNCTION(false),
    /** A function neither built in nor known to the {@link FunctionCatalog}; detail is its name. */
    UNKNOWN_FUNCTION(false),
    /** A volatile function not on the list of harmless volatile built-ins; detail is its name. */
    VOLATILE_FUNCTION(false),
    /** A transaction a standby refuses: serializable, read-write, or two-phase commit; detail says which. */
    PRIMARY_ONLY_TRANSACTION(false),
    /**
     * {@code DISCARD ALL}, {@code PLANS}, {@code SEQUENCES} or {@code TEMP}/{@code TEMPORARY}; detail
     * is the keyword after {@code DISCARD}. A standby runs it, but it resets the session it runs on —
     * {@code DISCARD ALL} also the read-only default a router gives its replica connections — so it
     * goes to the primary.
     */
    SESSION_RESET(false),
    /** Maintenance and server utilities ({@code VACUUM}, {@code ANALYZE}, {@code LISTEN}, {@code EXECUTE}, …); detail is the command. */
    UTILITY(false),
    /** {@code CALL} of a procedure; detail is the procedure name. */
    CALL(false),
    /** An anonymous {@code DO} block. */
    DO_BLOCK(false),
    /** {@code COPY … FROM}. */
    COPY_FROM(false),
    /** {@code LOCK TABLE}. */
    LOCK(false),
    /** {@code EXPLAIN ANALYZE} (which executes) of a statement that is not read-only; detail says why. */
    EXPLAIN_ANALYZE_WRITE(false),
    /** Several statements, at least one of which is not read-only; detail names the first offender's reason. */
    MULTIPLE_STATEMENTS(false),
    /** Not lexically valid, or a statement kind the classifier does not know. */
    UNPARSEABLE(false),
    /** Null, blank or comment-only SQL. */
    EMPTY(false);

    private final boolean replicaSafe;

    Reason(boolean replicaSafe) {
        this.replicaSafe = replicaSafe;
    }

    /** Whether a statement with this reason may run on a replica. */
    public boolean replicaSafe() {
        return replicaSafe;
    }
}
