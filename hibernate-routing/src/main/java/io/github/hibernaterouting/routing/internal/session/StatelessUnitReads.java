package io.github.hibernaterouting.routing.internal.session;

import java.util.List;

/**
 * What one stateless unit of work read: the statements it ran on replicas (also recorded for its routing
 * scope, {@link StatelessScopeReads}) and the queries it ran on the primary. A stateless session keeps no
 * loaded state, so {@link ReplicaReadGuard} decides by these whether a write of an unversioned entity may
 * overwrite what a stale replica showed. One per unit of work, used by its thread.
 */
public final class StatelessUnitReads {
    private final StatelessReads own = new StatelessReads();
    /** What the stateless sessions of the persistence unit read on replicas, per routing scope. */
    private final StatelessScopeReads scopeReads;
    /** The queries this unit ran on the primary; {@code null} until the first. */
    private StatelessReads primaryReads;

    StatelessUnitReads(StatelessScopeReads scopeReads) {
        this.scopeReads = scopeReads;
    }

    /** A statement of the unit runs on a replica. */
    public void ranOnReplica(String sql) {
        own.ran(sql);
        scopeReads.ran(sql);
    }

    /** A query of the unit runs on the primary (see {@link #scopeReadOne}). */
    public void queriedPrimary(String sql) {
        if (primaryReads == null) {
            primaryReads = new StatelessReads();
        }
        primaryReads.ran(sql);
    }

    /** The first of {@code tables} this unit may have read on a replica; {@code null} if none. */
    String readOne(Iterable<String> tables) {
        return own.readOne(tables);
    }

    /**
     * The first of {@code tables} that another stateless session of the current routing scope may have
     * read on a replica ({@link StatelessScopeReads}); {@code null} if none.
     */
    String scopeReadOne(Iterable<String> tables) {
        final String table = scopeReads.readOne(tables);
        // A session that read the table on the primary itself (in its read-write transaction, say)
        // writes what it read there, as the fix for the refusal says to.
        return table == null || primaryReads != null && primaryReads.readOne(List.of(table)) != null ? null : table;
    }
}
