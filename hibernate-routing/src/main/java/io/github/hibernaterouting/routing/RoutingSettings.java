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
	 * @settingDefault {@code READ_AFTER_WRITE}
	 * @since 0.1
	 */
	String STRATEGY = PREFIX + "strategy";

	/**
	 * Where read-write transactions start, a {@link TransactionMode}: {@code LAZY} starts them on a
	 * replica and moves to the primary at the first write; {@code PRIMARY} pins every read-write
	 * transaction to the primary from {@code begin}.
	 *
	 * @settingDefault {@code LAZY}
	 * @since 0.1
	 */
	String TRANSACTIONS = PREFIX + "transactions";

	/**
	 * How a replica is chosen among the eligible ones, a {@link LoadBalancing}.
	 *
	 * @settingDefault {@code ROUND_ROBIN}
	 * @since 0.1
	 */
	String LOAD_BALANCING = PREFIX + "load_balancing";

	/**
	 * A replica whose replay position is more than this many bytes of WAL behind the primary gets no
	 * reads. {@code 0} disables the byte bound.
	 *
	 * @settingDefault {@code 16MB} (16777216 bytes)
	 * @since 0.1
	 */
	String MAX_REPLICA_LAG_BYTES = PREFIX + "max_replica_lag_bytes";

	/**
	 * A replica that is behind the primary and last replayed a transaction longer ago than this gets
	 * no reads. {@code 0} disables the time bound.
	 *
	 * @settingDefault {@code 10s}
	 * @since 0.1
	 */
	String MAX_REPLICA_LAG = PREFIX + "max_replica_lag";

	/**
	 * What happens when no replica can serve a read, a {@link ReplicaFailure}: {@code FALLBACK} uses
	 * another replica or the primary (only before any statement of the unit of work ran on the failed
	 * replica); {@code FAIL} throws.
	 *
	 * @settingDefault {@code FALLBACK}
	 * @since 0.1
	 */
	String REPLICA_FAILURE = PREFIX + "replica_failure";

	/**
	 * How often each replica's health, recovery state and lag are checked in the background.
	 *
	 * @settingDefault {@code 1s}
	 * @since 0.1
	 */
	String HEALTH_CHECK_INTERVAL = PREFIX + "health_check_interval";

	/**
	 * Consecutive connection failures after which a replica's circuit breaker opens.
	 *
	 * @settingDefault {@code 1}
	 * @since 0.1
	 */
	String CIRCUIT_BREAKER_FAILURE_THRESHOLD = PREFIX + "circuit_breaker.failure_threshold";

	/**
	 * How long an open circuit breaker keeps a replica out before one trial (half-open).
	 *
	 * @settingDefault {@code 5s}
	 * @since 0.1
	 */
	String CIRCUIT_BREAKER_OPEN_DURATION = PREFIX + "circuit_breaker.open_duration";

	/**
	 * Maximum size of the primary's HikariCP pool.
	 *
	 * @settingDefault {@code 10}
	 * @since 0.1
	 */
	String PRIMARY_MAXIMUM_POOL_SIZE = PREFIX + "primary.maximum_pool_size";

	/**
	 * Minimum idle connections of the primary's pool.
	 *
	 * @settingDefault {@code 1}
	 * @since 0.1
	 */
	String PRIMARY_MINIMUM_IDLE = PREFIX + "primary.minimum_idle";

	/**
	 * How long a caller waits for a primary connection before failing.
	 *
	 * @settingDefault {@code 30s}
	 * @since 0.1
	 */
	String PRIMARY_CONNECTION_TIMEOUT = PREFIX + "primary.connection_timeout";

	/**
	 * Maximum size of each replica's HikariCP pool (one pool per replica).
	 *
	 * @settingDefault {@code 10}
	 * @since 0.1
	 */
	String REPLICA_MAXIMUM_POOL_SIZE = PREFIX + "replica.maximum_pool_size";

	/**
	 * Minimum idle connections of each replica's pool.
	 *
	 * @settingDefault {@code 1}
	 * @since 0.1
	 */
	String REPLICA_MINIMUM_IDLE = PREFIX + "replica.minimum_idle";

	/**
	 * How long a caller waits for a replica connection before the replica counts as failed and the
	 * failure policy applies. Short, because the primary is a fallback. HikariCP's minimum is 250 ms.
	 *
	 * @settingDefault {@code 1s}
	 * @since 0.1
	 */
	String REPLICA_CONNECTION_TIMEOUT = PREFIX + "replica.connection_timeout";

	/**
	 * Maximum number of distinct SQL strings whose routing decision is memoised.
	 *
	 * @settingDefault {@code 10000}
	 * @since 0.1
	 */
	String CLASSIFIER_CACHE_SIZE = PREFIX + "classifier.cache_size";

	/**
	 * Whether to load function volatility from the primary's {@code pg_proc} at bootstrap, so that
	 * calls of user-defined {@code STABLE}/{@code IMMUTABLE} functions can go to replicas. Without
	 * it, unknown functions go to the primary.
	 *
	 * @settingDefault {@code true}
	 * @since 0.1
	 */
	String CLASSIFIER_LOAD_CATALOG = PREFIX + "classifier.load_catalog";

	/**
	 * Whether to verify that each replica is in recovery ({@code pg_is_in_recovery()}); a server that
	 * is not (a promoted standby, or a primary given by mistake) is never used as a replica. Turn off
	 * only for benchmarks that point a "replica" at the primary.
	 *
	 * @settingDefault {@code true}
	 * @since 0.1
	 */
	String CHECK_RECOVERY = PREFIX + "check_recovery";

	/**
	 * The Micrometer {@code MeterRegistry} instance to record meters in.
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
	 * @settingDefault {@code MEMORY}
	 * @since 0.1
	 */
	String ACTOR_STAMPS = PREFIX + "actor_stamps";

	/**
	 * The table that holds actors, for {@code actor_stamps=TABLE}; may be schema-qualified.
	 *
	 * @settingDefault {@code users}
	 * @since 0.1
	 */
	String ACTOR_STAMPS_TABLE = PREFIX + "actor_stamps.table";

	/**
	 * The column of {@link #ACTOR_STAMPS_TABLE} that holds the actor key.
	 *
	 * @settingDefault {@code id}
	 * @since 0.1
	 */
	String ACTOR_STAMPS_KEY_COLUMN = PREFIX + "actor_stamps.key_column";

	/**
	 * The {@code pg_lsn} column of {@link #ACTOR_STAMPS_TABLE} that holds the stamp; it is only ever
	 * raised ({@code GREATEST}), so concurrent writers never move it backwards.
	 *
	 * @settingDefault {@code read_after_write_lsn}
	 * @since 0.1
	 */
	String ACTOR_STAMPS_COLUMN = PREFIX + "actor_stamps.column";

	/**
	 * How long this instance remembers an actor's stamp in memory after the actor's last write.
	 *
	 * @settingDefault {@code 60s}
	 * @since 0.1
	 */
	String ACTOR_STAMPS_MEMORY_TTL = PREFIX + "actor_stamps.memory_ttl";

	/**
	 * The Redis server for the shared mutation marker ({@code redis://host:port} or
	 * {@code redis-sentinel://host:port/?sentinelMasterId=name}). Unset: no marker. Falls back to the
	 * environment variable {@code HIBERNATE_ROUTING_REDIS_URI}. A password in it is never logged.
	 *
	 * @settingDefault none (no marker)
	 * @since 0.1
	 */
	String REDIS_URI = PREFIX + "redis.uri";

	/**
	 * Prefix of the marker keys: {@code <prefix>:replication:<actor>}.
	 *
	 * @settingDefault {@code hibernate-routing}
	 * @since 0.1
	 */
	String REDIS_PREFIX = PREFIX + "redis.prefix";

	/**
	 * How long a marker lives after it was last set.
	 *
	 * @settingDefault {@code 10s}
	 * @since 0.1
	 */
	String REDIS_WINDOW = PREFIX + "redis.window";

	/**
	 * Timeout of every Redis command (and of connecting).
	 *
	 * @settingDefault {@code 1s}
	 * @since 0.1
	 */
	String REDIS_TIMEOUT = PREFIX + "redis.timeout";

	/**
	 * How long a unit of work that needs a position no replica is known to have replayed waits for a
	 * replica to get there before it uses the primary.
	 *
	 * @settingDefault {@code 100ms}
	 * @since 0.1
	 */
	String LSN_WAIT = PREFIX + "lsn_wait";

	/**
	 * How often the replicas are asked for their replay position during that wait.
	 *
	 * @settingDefault {@code 5ms}
	 * @since 0.1
	 */
	String LSN_POLL_INTERVAL = PREFIX + "lsn_poll_interval";

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
