package io.github.hibernaterouting.routing;

/**
 * Every setting of hibernate-routing, as persistence-unit properties.
 *
 * <p>Settings are read once, when the persistence unit is built, and validated then: a bad value
 * fails the bootstrap with a {@link RoutingConfigurationException} naming the key, the value and
 * what is allowed. The primary is the persistence unit's own {@code jakarta.persistence.jdbc.url}
 * (or {@code hibernate.connection.url}) with its user and password.
 *
 * <p>Durations accept ISO-8601 ({@code PT5S}) or a number with a unit: {@code 250ms}, {@code 5s},
 * {@code 2m}, {@code 1h}; a bare number means milliseconds. Sizes in bytes accept a bare number or
 * a number with {@code kB}, {@code MB}, {@code GB} (powers of 1024).
 */
public interface RoutingSettings {
    /** Prefix of every key. */
    String PREFIX = "hibernate.routing.";

    /**
     * JDBC URLs of the hot standbys, comma-separated. Absent or blank, or every URL equal to the
     * primary's: routing is off and Hibernate runs exactly as without this library. Falls back to the
     * environment variable {@code HIBERNATE_ROUTING_REPLICA_URLS} when the setting is absent.
     *
     * @settingDefault none (routing off)
     * @since 0.1
     */
    String REPLICA_URLS = PREFIX + "replica_urls";

    /**
     * User for the replica connections. Falls back to {@code HIBERNATE_ROUTING_REPLICA_USER}, then to
     * the primary's user.
     *
     * @settingDefault the primary's user
     * @since 0.1
     */
    String REPLICA_USER = PREFIX + "replica_user";

    /**
     * Password for the replica connections. Falls back to {@code HIBERNATE_ROUTING_REPLICA_PASSWORD},
     * then to the primary's password. Never logged.
     *
     * @settingDefault the primary's password
     * @since 0.1
     */
    String REPLICA_PASSWORD = PREFIX + "replica_password";

    /**
     * The persistence-unit default {@link Strategy}; also the name of the EntityManager/Session
     * property and of the query hint value ({@link RoutingHints}) that override it.
     *
     * @settingDefault {@value #DEFAULT_STRATEGY}
     * @since 0.1
     */
    String STRATEGY = PREFIX + "strategy";

    /** The default of {@link #STRATEGY}. */
    String DEFAULT_STRATEGY = "READ_AFTER_WRITE";

    /**
     * Where read-write transactions start, a {@link TransactionMode}: {@code LAZY} starts them on a
     * replica and moves to the primary at the first write; {@code PRIMARY} pins every read-write
     * transaction to the primary from {@code begin}.
     *
     * @settingDefault {@value #DEFAULT_TRANSACTIONS}
     * @since 0.1
     */
    String TRANSACTIONS = PREFIX + "transactions";

    /** The default of {@link #TRANSACTIONS}. */
    String DEFAULT_TRANSACTIONS = "LAZY";

    /**
     * How a replica is chosen among the eligible ones, a {@link LoadBalancing}.
     *
     * @settingDefault {@value #DEFAULT_LOAD_BALANCING}
     * @since 0.1
     */
    String LOAD_BALANCING = PREFIX + "load_balancing";

    /** The default of {@link #LOAD_BALANCING}. */
    String DEFAULT_LOAD_BALANCING = "ROUND_ROBIN";

    /**
     * A replica whose replay position is more than this many bytes of WAL behind the primary gets no
     * reads. {@code 0} disables the byte bound.
     *
     * @settingDefault {@value #DEFAULT_MAX_REPLICA_LAG_BYTES}
     * @since 0.1
     */
    String MAX_REPLICA_LAG_BYTES = PREFIX + "max_replica_lag_bytes";

    /** The default of {@link #MAX_REPLICA_LAG_BYTES}. */
    String DEFAULT_MAX_REPLICA_LAG_BYTES = "16MB";

    /**
     * A replica that is behind the primary and last replayed a transaction longer ago than this gets
     * no reads. {@code 0} disables the time bound.
     *
     * @settingDefault {@value #DEFAULT_MAX_REPLICA_LAG}
     * @since 0.1
     */
    String MAX_REPLICA_LAG = PREFIX + "max_replica_lag";

    /** The default of {@link #MAX_REPLICA_LAG}. */
    String DEFAULT_MAX_REPLICA_LAG = "10s";

    /**
     * What happens when no replica can serve a read, a {@link ReplicaFailure}: {@code FALLBACK} uses
     * another replica or the primary (only before any statement of the unit of work ran on the failed
     * replica); {@code FAIL} throws.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_FAILURE}
     * @since 0.1
     */
    String REPLICA_FAILURE = PREFIX + "replica_failure";

    /** The default of {@link #REPLICA_FAILURE}. */
    String DEFAULT_REPLICA_FAILURE = "FALLBACK";

    /**
     * How often each replica's health, recovery state and lag are checked in the background.
     *
     * @settingDefault {@value #DEFAULT_HEALTH_CHECK_INTERVAL}
     * @since 0.1
     */
    String HEALTH_CHECK_INTERVAL = PREFIX + "health_check_interval";

    /** The default of {@link #HEALTH_CHECK_INTERVAL}. */
    String DEFAULT_HEALTH_CHECK_INTERVAL = "1s";

    /**
     * Consecutive connection failures after which a replica's circuit breaker opens.
     *
     * @settingDefault {@value #DEFAULT_CIRCUIT_BREAKER_FAILURE_THRESHOLD}
     * @since 0.1
     */
    String CIRCUIT_BREAKER_FAILURE_THRESHOLD = PREFIX + "circuit_breaker.failure_threshold";

    /** The default of {@link #CIRCUIT_BREAKER_FAILURE_THRESHOLD}. */
    int DEFAULT_CIRCUIT_BREAKER_FAILURE_THRESHOLD = 1;

    /**
     * How long an open circuit breaker keeps a replica out before one trial (half-open).
     *
     * @settingDefault {@value #DEFAULT_CIRCUIT_BREAKER_OPEN_DURATION}
     * @since 0.1
     */
    String CIRCUIT_BREAKER_OPEN_DURATION = PREFIX + "circuit_breaker.open_duration";

    /** The default of {@link #CIRCUIT_BREAKER_OPEN_DURATION}. */
    String DEFAULT_CIRCUIT_BREAKER_OPEN_DURATION = "5s";

    /**
     * Maximum size of the primary's HikariCP pool.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_MAXIMUM_POOL_SIZE}
     * @since 0.1
     */
    String PRIMARY_MAXIMUM_POOL_SIZE = PREFIX + "primary.maximum_pool_size";

    /** The default of {@link #PRIMARY_MAXIMUM_POOL_SIZE}. */
    int DEFAULT_PRIMARY_MAXIMUM_POOL_SIZE = 10;

    /**
     * Minimum idle connections of the primary's pool.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_MINIMUM_IDLE}
     * @since 0.1
     */
    String PRIMARY_MINIMUM_IDLE = PREFIX + "primary.minimum_idle";

    /** The default of {@link #PRIMARY_MINIMUM_IDLE}. */
    int DEFAULT_PRIMARY_MINIMUM_IDLE = 1;

    /**
     * How long a caller waits for a primary connection before failing.
     *
     * @settingDefault {@value #DEFAULT_PRIMARY_CONNECTION_TIMEOUT}
     * @since 0.1
     */
    String PRIMARY_CONNECTION_TIMEOUT = PREFIX + "primary.connection_timeout";

    /** The default of {@link #PRIMARY_CONNECTION_TIMEOUT}. */
    String DEFAULT_PRIMARY_CONNECTION_TIMEOUT = "30s";

    /**
     * Maximum size of each replica's HikariCP pool (one pool per replica).
     *
     * @settingDefault {@value #DEFAULT_REPLICA_MAXIMUM_POOL_SIZE}
     * @since 0.1
     */
    String REPLICA_MAXIMUM_POOL_SIZE = PREFIX + "replica.maximum_pool_size";

    /** The default of {@link #REPLICA_MAXIMUM_POOL_SIZE}. */
    int DEFAULT_REPLICA_MAXIMUM_POOL_SIZE = 10;

    /**
     * Minimum idle connections of each replica's pool.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_MINIMUM_IDLE}
     * @since 0.1
     */
    String REPLICA_MINIMUM_IDLE = PREFIX + "replica.minimum_idle";

    /** The default of {@link #REPLICA_MINIMUM_IDLE}. */
    int DEFAULT_REPLICA_MINIMUM_IDLE = 1;

    /**
     * How long a caller waits for a replica connection before the replica counts as failed and the
     * failure policy applies. Short, because the primary is a fallback. HikariCP's minimum is 250 ms.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_CONNECTION_TIMEOUT}
     * @since 0.1
     */
    String REPLICA_CONNECTION_TIMEOUT = PREFIX + "replica.connection_timeout";

    /** The default of {@link #REPLICA_CONNECTION_TIMEOUT}. */
    String DEFAULT_REPLICA_CONNECTION_TIMEOUT = "1s";

    /**
     * Maximum number of distinct SQL strings whose routing decision is memoised.
     *
     * @settingDefault {@value #DEFAULT_CLASSIFIER_CACHE_SIZE}
     * @since 0.1
     */
    String CLASSIFIER_CACHE_SIZE = PREFIX + "classifier.cache_size";

    /** The default of {@link #CLASSIFIER_CACHE_SIZE}. */
    int DEFAULT_CLASSIFIER_CACHE_SIZE = 10_000;

    /**
     * Whether to load function volatility from the primary's {@code pg_proc} at bootstrap, so that
     * calls of user-defined {@code STABLE}/{@code IMMUTABLE} functions can go to replicas. Without
     * it, unknown functions go to the primary.
     *
     * @settingDefault {@value #DEFAULT_CLASSIFIER_LOAD_CATALOG}
     * @since 0.1
     */
    String CLASSIFIER_LOAD_CATALOG = PREFIX + "classifier.load_catalog";

    /** The default of {@link #CLASSIFIER_LOAD_CATALOG}. */
    boolean DEFAULT_CLASSIFIER_LOAD_CATALOG = true;

    /**
     * Whether to verify that each replica is in recovery ({@code pg_is_in_recovery()}); a server that
     * is not (a promoted standby, or a primary given by mistake) is never used as a replica. Turn off
     * only for benchmarks that point a "replica" at the primary.
     *
     * @settingDefault {@value #DEFAULT_CHECK_RECOVERY}
     * @since 0.1
     */
    String CHECK_RECOVERY = PREFIX + "check_recovery";

    /** The default of {@link #CHECK_RECOVERY}. */
    boolean DEFAULT_CHECK_RECOVERY = true;

    /**
     * The Micrometer {@code MeterRegistry} instance to record meters in; any other value fails.
     *
     * @settingDefault {@code io.micrometer.core.instrument.Metrics.globalRegistry}
     * @since 0.1
     */
    String METER_REGISTRY = PREFIX + "meter_registry";

    /**
     * Where an actor's last commit position (its stamp) is kept, an {@link ActorStamps}: {@code MEMORY}
     * keeps it in this instance only; {@code TABLE} also writes it to a {@code pg_lsn} column of the
     * actors' table on the primary (checked at bootstrap), so every instance can read it.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS}
     * @since 0.1
     */
    String ACTOR_STAMPS = PREFIX + "actor_stamps";

    /** The default of {@link #ACTOR_STAMPS}. */
    String DEFAULT_ACTOR_STAMPS = "MEMORY";

    /**
     * The table that holds actors, for {@code actor_stamps=TABLE}; may be schema-qualified.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_TABLE}
     * @since 0.1
     */
    String ACTOR_STAMPS_TABLE = PREFIX + "actor_stamps.table";

    /** The default of {@link #ACTOR_STAMPS_TABLE}. */
    String DEFAULT_ACTOR_STAMPS_TABLE = "users";

    /**
     * The column of {@link #ACTOR_STAMPS_TABLE} that holds the actor key.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_KEY_COLUMN}
     * @since 0.1
     */
    String ACTOR_STAMPS_KEY_COLUMN = PREFIX + "actor_stamps.key_column";

    /** The default of {@link #ACTOR_STAMPS_KEY_COLUMN}. */
    String DEFAULT_ACTOR_STAMPS_KEY_COLUMN = "id";

    /**
     * The {@code pg_lsn} column of {@link #ACTOR_STAMPS_TABLE} that holds the stamp; it is only ever
     * raised ({@code GREATEST}), so concurrent writers never move it backwards.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_COLUMN}
     * @since 0.1
     */
    String ACTOR_STAMPS_COLUMN = PREFIX + "actor_stamps.column";

    /** The default of {@link #ACTOR_STAMPS_COLUMN}. */
    String DEFAULT_ACTOR_STAMPS_COLUMN = "read_after_write_lsn";

    /**
     * How long this instance remembers an actor's stamp in memory after the actor's last write.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_MEMORY_TTL}
     * @since 0.1
     */
    String ACTOR_STAMPS_MEMORY_TTL = PREFIX + "actor_stamps.memory_ttl";

    /** The default of {@link #ACTOR_STAMPS_MEMORY_TTL}. */
    String DEFAULT_ACTOR_STAMPS_MEMORY_TTL = "60s";

    /**
     * The Redis server for the shared mutation marker ({@code redis://host:port} or
     * {@code redis-sentinel://host:port/?sentinelMasterId=name}). Unset: no marker. Falls back to the environment
     * variable {@code HIBERNATE_ROUTING_REDIS_URI}. Needs {@code io.lettuce:lettuce-core}. Never logged.
     *
     * @settingDefault none (no marker)
     * @since 0.1
     */
    String REDIS_URI = PREFIX + "redis.uri";

    /**
     * Prefix of the marker keys: {@code <prefix>:replication:<actor>}.
     *
     * @settingDefault {@value #DEFAULT_REDIS_PREFIX}
     * @since 0.1
     */
    String REDIS_PREFIX = PREFIX + "redis.prefix";

    /** The default of {@link #REDIS_PREFIX}. */
    String DEFAULT_REDIS_PREFIX = "hibernate-routing";

    /**
     * How long a marker lives after it was last set.
     *
     * @settingDefault {@value #DEFAULT_REDIS_WINDOW}
     * @since 0.1
     */
    String REDIS_WINDOW = PREFIX + "redis.window";

    /** The default of {@link #REDIS_WINDOW}. */
    String DEFAULT_REDIS_WINDOW = "10s";

    /**
     * Timeout of every Redis command (and of connecting).
     *
     * @settingDefault {@value #DEFAULT_REDIS_TIMEOUT}
     * @since 0.1
     */
    String REDIS_TIMEOUT = PREFIX + "redis.timeout";

    /** The default of {@link #REDIS_TIMEOUT}. */
    String DEFAULT_REDIS_TIMEOUT = "1s";

    /**
     * How long a unit of work that needs a position no replica is known to have replayed waits for a
     * replica to get there before it uses the primary.
     *
     * @settingDefault {@value #DEFAULT_LSN_WAIT}
     * @since 0.1
     */
    String LSN_WAIT = PREFIX + "lsn_wait";

    /** The default of {@link #LSN_WAIT}. */
    String DEFAULT_LSN_WAIT = "100ms";

    /**
     * How often the replicas are asked for their replay position during that wait.
     *
     * @settingDefault {@value #DEFAULT_LSN_POLL_INTERVAL}
     * @since 0.1
     */
    String LSN_POLL_INTERVAL = PREFIX + "lsn_poll_interval";

    /** The default of {@link #LSN_POLL_INTERVAL}. */
    String DEFAULT_LSN_POLL_INTERVAL = "5ms";

    /** Values of {@link #ACTOR_STAMPS}. */
    enum ActorStamps {
        /** This instance's memory only. */
        MEMORY,
        /** Memory and a {@code pg_lsn} column of the actors' table on the primary. */
        TABLE
    }

    /** Values of {@link #TRANSACTIONS}. */
    enum TransactionMode {
        /** Start on a replica, move to the primary at the first write. */
        LAZY,
        /** Pin read-write transactions to the primary from {@code begin}. */
        PRIMARY
    }

    /** Values of {@link #LOAD_BALANCING}. */
    enum LoadBalancing {
        /** Take eligible replicas in turn. */
        ROUND_ROBIN,
        /** Take the eligible replica with the fewest bytes left to replay. */
        LEAST_LAG
    }

    /** Values of {@link #REPLICA_FAILURE}. */
    enum ReplicaFailure {
        /** Use another replica or the primary, before any statement ran. */
        FALLBACK,
        /** Surface the error. */
        FAIL
    }
}
