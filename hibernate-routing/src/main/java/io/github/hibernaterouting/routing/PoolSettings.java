package io.github.hibernaterouting.routing;

/**
 * The settings of the pools the library builds for a primary or replicas given as URLs. For data
 * sources your application or server supplies, they are refused: size those pools where they are
 * defined. Each is also a constant of {@link RoutingSettings}, which extends this interface.
 */
public interface PoolSettings {
    /**
     * Maximum size of the primary's HikariCP pool.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_MAXIMUM_POOL_SIZE}
     * @since 0.1
     */
    String PRIMARY_MAXIMUM_POOL_SIZE = "hibernate.routing.primary.maximum_pool_size";

    /** The default of {@link #PRIMARY_MAXIMUM_POOL_SIZE}. */
    int DEFAULT_PRIMARY_MAXIMUM_POOL_SIZE = 10;

    /**
     * Minimum idle connections of the primary's pool.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_MINIMUM_IDLE}
     * @since 0.1
     */
    String PRIMARY_MINIMUM_IDLE = "hibernate.routing.primary.minimum_idle";

    /** The default of {@link #PRIMARY_MINIMUM_IDLE}. */
    int DEFAULT_PRIMARY_MINIMUM_IDLE = 1;

    /**
     * How long a caller waits for a primary connection before failing.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_CONNECTION_TIMEOUT}
     * @since 0.1
     */
    String PRIMARY_CONNECTION_TIMEOUT = "hibernate.routing.primary.connection_timeout";

    /** The default of {@link #PRIMARY_CONNECTION_TIMEOUT}. */
    String DEFAULT_PRIMARY_CONNECTION_TIMEOUT = "30s";

    /**
     * Maximum size of each replica's HikariCP pool (one pool per replica).
     *
     * @settingDefault {@value #DEFAULT_REPLICA_MAXIMUM_POOL_SIZE}
     * @since 0.1
     */
    String REPLICA_MAXIMUM_POOL_SIZE = "hibernate.routing.replica.maximum_pool_size";

    /** The default of {@link #REPLICA_MAXIMUM_POOL_SIZE}. */
    int DEFAULT_REPLICA_MAXIMUM_POOL_SIZE = 10;

    /**
     * Minimum idle connections of each replica's pool.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_MINIMUM_IDLE}
     * @since 0.1
     */
    String REPLICA_MINIMUM_IDLE = "hibernate.routing.replica.minimum_idle";

    /** The default of {@link #REPLICA_MINIMUM_IDLE}. */
    int DEFAULT_REPLICA_MINIMUM_IDLE = 1;

    /**
     * How long a caller waits for a replica connection before the replica counts as failed and the
     * failure policy applies. Short, because the primary is a fallback. HikariCP's minimum is 250 ms.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_CONNECTION_TIMEOUT}
     * @since 0.1
     */
    String REPLICA_CONNECTION_TIMEOUT = "hibernate.routing.replica.connection_timeout";

    /** The default of {@link #REPLICA_CONNECTION_TIMEOUT}. */
    String DEFAULT_REPLICA_CONNECTION_TIMEOUT = "1s";
}
