package io.github.hibernaterouting.it.matrix;

import java.util.List;

/**
 * One configuration of the checker matrix: a level of each factor. {@link #DESIGN} is the set of cells
 * that runs; it covers every pair of factor levels (a pairwise design, checked by
 * {@code CellDesignTest}), so a defect that needs two settings together shows in some cell.
 *
 * @param id the name to select the cell with, {@code -Dit.cell=C3}
 */
public record Cell(
        String id,
        Cache cache,
        Stamps stamps,
        Reads reads,
        Failure failure,
        Isolation isolation,
        Pools pools,
        Endpoint endpoint) {

    /** The second-level cache (Hibernate's JCache integration on Ehcache 3, every entity and the collection cached). */
    public enum Cache {
        OFF,
        /** Also the query cache; with two instances the cache is shared, like a replicated cache of a cluster. */
        ON
    }

    /** Where an actor's stamp travels to its next read. */
    public enum Stamps {
        /** One persistence unit; stamps in its memory. */
        MEMORY,
        /** Two persistence units sharing only the database; {@code actor_stamps=TABLE} on a {@code users} table. */
        TABLE,
        /** Two persistence units sharing the database and Redis ({@code redis.uri}); Redis faults too. */
        REDIS
    }

    /** Whether some reads ask for {@code STALE_READ}. */
    public enum Reads {
        /** Every read under the default strategy (READ_AFTER_WRITE). */
        DEFAULT,
        /**
         * Half the loads of read-modify-write operations run under {@code STALE_READ} (a query hint, or the
         * operation's scope), and a fifth of the reads of an actor's own row carry the hint; those reads are
         * not checked for read-your-writes, their writes are checked for lost updates.
         */
        STALE_READ
    }

    /** {@code hibernate.routing.replica_failure}. */
    public enum Failure {
        FALLBACK,
        FAIL
    }

    /** The isolation level of every transaction ({@code Connection.setTransactionIsolation} before {@code begin}). */
    public enum Isolation {
        READ_COMMITTED,
        REPEATABLE_READ
    }

    /** Pool sizes against the 12 actor threads. */
    public enum Pools {
        /** Primary and replica pools of 16: never short of connections. */
        ROOMY,
        /** Primary and replica pools of 4, three times fewer than the threads. */
        TIGHT
    }

    /** How the replicas are reached. */
    public enum Endpoint {
        /** One URL per standby. */
        URLS,
        /**
         * One URL for both standbys: a round-robin TCP relay in front of them, as a load-balanced read
         * endpoint (a CloudNativePG {@code -ro} Service, HAProxy) is; every read is decided by the server
         * its connection reached.
         */
        RELAY
    }

    /**
     * The cells that run, a pairwise covering design: for any two factors, every combination of their
     * levels is in at least one cell (8 cells instead of the 192 of the full factorial). C1 is the
     * library's defaults.
     */
    public static final List<Cell> DESIGN = List.of(
            new Cell(
                    "C1",
                    Cache.OFF,
                    Stamps.MEMORY,
                    Reads.DEFAULT,
                    Failure.FALLBACK,
                    Isolation.READ_COMMITTED,
                    Pools.ROOMY,
                    Endpoint.URLS),
            new Cell(
                    "C2",
                    Cache.OFF,
                    Stamps.REDIS,
                    Reads.STALE_READ,
                    Failure.FALLBACK,
                    Isolation.REPEATABLE_READ,
                    Pools.ROOMY,
                    Endpoint.URLS),
            new Cell(
                    "C3",
                    Cache.ON,
                    Stamps.TABLE,
                    Reads.DEFAULT,
                    Failure.FALLBACK,
                    Isolation.REPEATABLE_READ,
                    Pools.TIGHT,
                    Endpoint.URLS),
            new Cell(
                    "C4",
                    Cache.ON,
                    Stamps.REDIS,
                    Reads.DEFAULT,
                    Failure.FAIL,
                    Isolation.READ_COMMITTED,
                    Pools.TIGHT,
                    Endpoint.RELAY),
            new Cell(
                    "C5",
                    Cache.ON,
                    Stamps.TABLE,
                    Reads.DEFAULT,
                    Failure.FALLBACK,
                    Isolation.READ_COMMITTED,
                    Pools.ROOMY,
                    Endpoint.RELAY),
            new Cell(
                    "C6",
                    Cache.OFF,
                    Stamps.TABLE,
                    Reads.STALE_READ,
                    Failure.FAIL,
                    Isolation.REPEATABLE_READ,
                    Pools.TIGHT,
                    Endpoint.RELAY),
            new Cell(
                    "C7",
                    Cache.ON,
                    Stamps.MEMORY,
                    Reads.STALE_READ,
                    Failure.FAIL,
                    Isolation.REPEATABLE_READ,
                    Pools.TIGHT,
                    Endpoint.RELAY),
            new Cell(
                    "C8",
                    Cache.OFF,
                    Stamps.REDIS,
                    Reads.STALE_READ,
                    Failure.FAIL,
                    Isolation.READ_COMMITTED,
                    Pools.ROOMY,
                    Endpoint.URLS));

    /** Two persistence units ("instances"), each operation on a random one, or one. */
    public int instances() {
        return stamps == Stamps.MEMORY ? 1 : 2;
    }

    public int poolSize() {
        return pools == Pools.TIGHT ? 4 : 16;
    }

    /** The factors, in the order of the report's columns. */
    public List<String> levels() {
        return List.of(
                cache.name(),
                stamps.name(),
                reads.name(),
                failure.name(),
                isolation == Isolation.READ_COMMITTED ? "RC" : "RR",
                pools.name() + " (" + poolSize() + ")",
                endpoint.name());
    }

    /** Short form: {@code C3 cache=ON stamps=TABLE …}. */
    public String describe() {
        return id + " cache=" + cache + " stamps=" + stamps + " reads=" + reads + " replica_failure=" + failure
                + " isolation=" + isolation + " pools=" + poolSize() + " endpoint=" + endpoint;
    }

    /** The cell named {@code id} (case-insensitive). */
    public static Cell named(String id) {
        return DESIGN.stream()
                .filter(cell -> cell.id().equalsIgnoreCase(id.trim()))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("No cell '" + id + "'; the cells are "
                        + DESIGN.stream().map(Cell::id).toList()));
    }
}
