package io.github.hibernaterouting.routing;

/**
 * The settings of read-your-writes: where an actor's stamp is kept, the shared Redis marker, and
 * how long a read waits for a replica to reach a position. Each is also a constant of
 * {@link RoutingSettings}, which extends this interface.
 */
public interface ConsistencySettings {
    /**
     * Where an actor's last commit position (its stamp) is kept, an {@link ActorStamps}: {@code MEMORY}
     * keeps it in this instance only; {@code TABLE} also writes it to a {@code pg_lsn} column of the
     * actors' table on the primary (checked at bootstrap), so every instance can read it.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS}
     * @since 0.1
     */
    String ACTOR_STAMPS = "hibernate.routing.actor_stamps";

    /** The default of {@link #ACTOR_STAMPS}. */
    String DEFAULT_ACTOR_STAMPS = "MEMORY";

    /**
     * The table that holds actors, for {@code actor_stamps=TABLE}; may be schema-qualified.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_TABLE}
     * @since 0.1
     */
    String ACTOR_STAMPS_TABLE = "hibernate.routing.actor_stamps.table";

    /** The default of {@link #ACTOR_STAMPS_TABLE}. */
    String DEFAULT_ACTOR_STAMPS_TABLE = "users";

    /**
     * The column of {@link #ACTOR_STAMPS_TABLE} that holds the actor key.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_KEY_COLUMN}
     * @since 0.1
     */
    String ACTOR_STAMPS_KEY_COLUMN = "hibernate.routing.actor_stamps.key_column";

    /** The default of {@link #ACTOR_STAMPS_KEY_COLUMN}. */
    String DEFAULT_ACTOR_STAMPS_KEY_COLUMN = "id";

    /**
     * The {@code pg_lsn} column of {@link #ACTOR_STAMPS_TABLE} that holds the stamp; it is only ever
     * raised ({@code GREATEST}), so concurrent writers never move it backwards.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_COLUMN}
     * @since 0.1
     */
    String ACTOR_STAMPS_COLUMN = "hibernate.routing.actor_stamps.column";

    /** The default of {@link #ACTOR_STAMPS_COLUMN}. */
    String DEFAULT_ACTOR_STAMPS_COLUMN = "read_after_write_lsn";

    /**
     * How long this instance remembers an actor's stamp in memory after the actor's last write.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_MEMORY_TTL}
     * @since 0.1
     */
    String ACTOR_STAMPS_MEMORY_TTL = "hibernate.routing.actor_stamps.memory_ttl";

    /** The default of {@link #ACTOR_STAMPS_MEMORY_TTL}. */
    String DEFAULT_ACTOR_STAMPS_MEMORY_TTL = "60s";

    /**
     * How many actors' stamps this instance keeps in memory at most, a whole number of at least 1.
     * Past it no stamp is lost: the stamp written longest ago is dropped, and until its
     * {@link #ACTOR_STAMPS_MEMORY_TTL} would have ended, the actors that share its segment (one of up
     * to 64, by hash of the actor) read only from a replica that has replayed it, or from the primary.
     * Dropped stamps are counted in {@code hibernate.routing.actor_stamps.dropped}.
     *
     * @settingDefault {@value #DEFAULT_ACTOR_STAMPS_MEMORY_CAPACITY}
     * @since 0.1
     */
    String ACTOR_STAMPS_MEMORY_CAPACITY = "hibernate.routing.actor_stamps.memory_capacity";

    /** The default of {@link #ACTOR_STAMPS_MEMORY_CAPACITY}. */
    int DEFAULT_ACTOR_STAMPS_MEMORY_CAPACITY = 100_000;

    /**
     * The Redis server for the shared mutation marker ({@code redis://host:port} or
     * {@code redis-sentinel://host:port/?sentinelMasterId=name}). Unset: no marker. Falls back to the
     * environment variable {@code HIBERNATE_ROUTING_REDIS_URI}. Needs {@code io.lettuce:lettuce-core}. Never logged.
     *
     * @settingDefault none (no marker)
     * @since 0.1
     */
    String REDIS_URI = "hibernate.routing.redis.uri";

    /**
     * Prefix of the marker keys: {@code <prefix>:replication:<actor>}.
     *
     * @settingDefault {@value #DEFAULT_REDIS_PREFIX}
     * @since 0.1
     */
    String REDIS_PREFIX = "hibernate.routing.redis.prefix";

    /** The default of {@link #REDIS_PREFIX}. */
    String DEFAULT_REDIS_PREFIX = "hibernate-routing";

    /**
     * How long a marker lives after it was last set. Once it expires, the lag bound is all that keeps
     * a replica without the actor's write from serving the actor, so it must be at least that bound as
     * the library applies it ({@code max_replica_lag}, at least three health-check intervals and 1 s)
     * plus 1 s for the clocks of the servers: by default it is that sum, and a shorter window fails the
     * bootstrap unless {@link #REDIS_ALLOW_SHORT_WINDOW} is set. With the time bound off
     * ({@code max_replica_lag=0}) there is no minimum.
     *
     * @settingDefault {@value #DEFAULT_REDIS_WINDOW}
     * @since 0.1
     */
    String REDIS_WINDOW = "hibernate.routing.redis.window";

    /**
     * The default of {@link #REDIS_WINDOW} with the default lag bound (10 s). With another bound the
     * default is that bound as applied plus 1 s, and never less than 10 s.
     */
    String DEFAULT_REDIS_WINDOW = "11s";

    /**
     * Whether the second-level cache is one cache shared by every instance of the application (a
     * clustered or distributed provider) rather than one per JVM. The actors' stamps
     * ({@code actor_stamps=TABLE}, the Redis marker) carry read-your-writes across instances, but a
     * cache local to each JVM is not told of a write made through another instance: it can serve the
     * actor an entry older than its own write, beyond any lag bound. With a second-level or query
     * cache on and stamps that cross instances, the bootstrap warns unless this says the cache is
     * shared.
     *
     * @settingDefault {@value #DEFAULT_SECOND_LEVEL_CACHE_SHARED}
     * @since 0.1
     */
    String SECOND_LEVEL_CACHE_SHARED = "hibernate.routing.second_level_cache.shared";

    /** The default of {@link #SECOND_LEVEL_CACHE_SHARED}. */
    String DEFAULT_SECOND_LEVEL_CACHE_SHARED = "false";

    /**
     * Accept a {@link #REDIS_WINDOW} shorter than the lag bound plus 1 s: after a marker expires, an
     * actor may then read from a replica that lacks its write but is within the lag bound, until that
     * replica's lag shows. For tests that watch markers expire, not for production.
     *
     * @settingDefault {@value #DEFAULT_REDIS_ALLOW_SHORT_WINDOW}
     * @since 0.1
     */
    String REDIS_ALLOW_SHORT_WINDOW = "hibernate.routing.redis.allow_short_window";

    /** The default of {@link #REDIS_ALLOW_SHORT_WINDOW}. */
    String DEFAULT_REDIS_ALLOW_SHORT_WINDOW = "false";

    /**
     * Timeout of every Redis command (and of connecting).
     *
     * @settingDefault {@value #DEFAULT_REDIS_TIMEOUT}
     * @since 0.1
     */
    String REDIS_TIMEOUT = "hibernate.routing.redis.timeout";

    /** The default of {@link #REDIS_TIMEOUT}. */
    String DEFAULT_REDIS_TIMEOUT = "1s";

    /**
     * How long a unit of work that needs a position no replica is known to have replayed waits for a
     * replica to get there before it uses the primary.
     *
     * @settingDefault {@value #DEFAULT_LSN_WAIT}
     * @since 0.1
     */
    String LSN_WAIT = "hibernate.routing.lsn_wait";

    /** The default of {@link #LSN_WAIT}. */
    String DEFAULT_LSN_WAIT = "100ms";

    /**
     * How often the replicas are asked for their replay position during that wait.
     *
     * @settingDefault {@value #DEFAULT_LSN_POLL_INTERVAL}
     * @since 0.1
     */
    String LSN_POLL_INTERVAL = "hibernate.routing.lsn_poll_interval";

    /** The default of {@link #LSN_POLL_INTERVAL}. */
    String DEFAULT_LSN_POLL_INTERVAL = "5ms";

    /** Values of {@link #ACTOR_STAMPS}. */
    enum ActorStamps {
        /** This instance's memory only. */
        MEMORY,
        /** Memory and a {@code pg_lsn} column of the actors' table on the primary. */
        TABLE
    }
}
