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
     * How long a caller waits for a replica connection before the failure policy applies (a busy pool
     * does not open the breaker). Short, because the primary is a fallback. HikariCP's minimum is 250 ms.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_CONNECTION_TIMEOUT}
     * @since 0.1
     */
    String REPLICA_CONNECTION_TIMEOUT = "hibernate.routing.replica.connection_timeout";

    /** The default of {@link #REPLICA_CONNECTION_TIMEOUT}. */
    String DEFAULT_REPLICA_CONNECTION_TIMEOUT = "1s";

    /**
     * How long a connection of the primary's pool lives at most before the pool retires it (once it is idle): {@code 0} for no limit, else at least 30s. Set it a few seconds below any limit of the network or the server (a firewall's idle cut-off, PgBouncer's {@code server_lifetime}). Unset: {@code hibernate.hikari.maxLifetime} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_MAX_LIFETIME}
     * @since 0.1
     */
    String PRIMARY_MAX_LIFETIME = "hibernate.routing.primary.max_lifetime";

    /** The default of {@link #PRIMARY_MAX_LIFETIME} (HikariCP's). */
    String DEFAULT_PRIMARY_MAX_LIFETIME = "30m";

    /**
     * How often an idle connection of the primary's pool is tested so that the network does not drop it: {@code 0} for never, else at least 30s and less than {@code max_lifetime}. Unset: {@code hibernate.hikari.keepaliveTime} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_KEEPALIVE_TIME}
     * @since 0.1
     */
    String PRIMARY_KEEPALIVE_TIME = "hibernate.routing.primary.keepalive_time";

    /** The default of {@link #PRIMARY_KEEPALIVE_TIME} (HikariCP's). */
    String DEFAULT_PRIMARY_KEEPALIVE_TIME = "2m";

    /**
     * How long a connection of the primary's pool above {@code minimum_idle} may sit idle before it is closed: {@code 0} for never, else at least 10s and less than {@code max_lifetime}. Unset: {@code hibernate.hikari.idleTimeout} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_IDLE_TIMEOUT}
     * @since 0.1
     */
    String PRIMARY_IDLE_TIMEOUT = "hibernate.routing.primary.idle_timeout";

    /** The default of {@link #PRIMARY_IDLE_TIMEOUT} (HikariCP's). */
    String DEFAULT_PRIMARY_IDLE_TIMEOUT = "10m";

    /**
     * How long a connection of the primary's pool may be out of the pool before HikariCP logs a possible leak, with the stack that borrowed it: {@code 0} for off, else at least 2s and less than {@code max_lifetime}. Unset: {@code hibernate.hikari.leakDetectionThreshold} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_LEAK_DETECTION_THRESHOLD}
     * @since 0.1
     */
    String PRIMARY_LEAK_DETECTION_THRESHOLD = "hibernate.routing.primary.leak_detection_threshold";

    /** The default of {@link #PRIMARY_LEAK_DETECTION_THRESHOLD} (HikariCP's). */
    String DEFAULT_PRIMARY_LEAK_DETECTION_THRESHOLD = "0";

    /**
     * How long a test of a connection of the primary's pool (before it is handed out, and for keepalive) may take: at least 250ms and less than {@code connection_timeout}. Unset: {@code hibernate.hikari.validationTimeout} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_VALIDATION_TIMEOUT}
     * @since 0.1
     */
    String PRIMARY_VALIDATION_TIMEOUT = "hibernate.routing.primary.validation_timeout";

    /** The default of {@link #PRIMARY_VALIDATION_TIMEOUT} (HikariCP's). */
    String DEFAULT_PRIMARY_VALIDATION_TIMEOUT = "5s";

    /**
     * How long a connection of each replica's pool lives at most before the pool retires it (once it is idle): {@code 0} for no limit, else at least 30s. Set it a few seconds below any limit of the network or the server (a firewall's idle cut-off, PgBouncer's {@code server_lifetime}). Unset: {@code hibernate.hikari.maxLifetime} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_MAX_LIFETIME}
     * @since 0.1
     */
    String REPLICA_MAX_LIFETIME = "hibernate.routing.replica.max_lifetime";

    /** The default of {@link #REPLICA_MAX_LIFETIME} (HikariCP's). */
    String DEFAULT_REPLICA_MAX_LIFETIME = "30m";

    /**
     * How often an idle connection of each replica's pool is tested so that the network does not drop it: {@code 0} for never, else at least 30s and less than {@code max_lifetime}. Unset: {@code hibernate.hikari.keepaliveTime} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_KEEPALIVE_TIME}
     * @since 0.1
     */
    String REPLICA_KEEPALIVE_TIME = "hibernate.routing.replica.keepalive_time";

    /** The default of {@link #REPLICA_KEEPALIVE_TIME} (HikariCP's). */
    String DEFAULT_REPLICA_KEEPALIVE_TIME = "2m";

    /**
     * How long a connection of each replica's pool above {@code minimum_idle} may sit idle before it is closed: {@code 0} for never, else at least 10s and less than {@code max_lifetime}. Unset: {@code hibernate.hikari.idleTimeout} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_IDLE_TIMEOUT}
     * @since 0.1
     */
    String REPLICA_IDLE_TIMEOUT = "hibernate.routing.replica.idle_timeout";

    /** The default of {@link #REPLICA_IDLE_TIMEOUT} (HikariCP's). */
    String DEFAULT_REPLICA_IDLE_TIMEOUT = "10m";

    /**
     * How long a connection of each replica's pool may be out of the pool before HikariCP logs a possible leak, with the stack that borrowed it: {@code 0} for off, else at least 2s and less than {@code max_lifetime}. Unset: {@code hibernate.hikari.leakDetectionThreshold} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_LEAK_DETECTION_THRESHOLD}
     * @since 0.1
     */
    String REPLICA_LEAK_DETECTION_THRESHOLD = "hibernate.routing.replica.leak_detection_threshold";

    /** The default of {@link #REPLICA_LEAK_DETECTION_THRESHOLD} (HikariCP's). */
    String DEFAULT_REPLICA_LEAK_DETECTION_THRESHOLD = "0";

    /**
     * How long a test of a connection of each replica's pool (before it is handed out, and for keepalive) may take: at least 250ms and less than {@code replica.connection_timeout}, so that a replica that does not answer fails over in time. Unset: {@code hibernate.hikari.validationTimeout} if set, else HikariCP's default.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_VALIDATION_TIMEOUT}
     * @since 0.1
     */
    String REPLICA_VALIDATION_TIMEOUT = "hibernate.routing.replica.validation_timeout";

    /** The default of {@link #REPLICA_VALIDATION_TIMEOUT}: half the replica's connection timeout. */
    String DEFAULT_REPLICA_VALIDATION_TIMEOUT = "500ms";
}
