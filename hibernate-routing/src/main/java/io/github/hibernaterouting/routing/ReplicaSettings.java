package io.github.hibernaterouting.routing;

/**
 * The settings of the replicas: which servers they are, how reads are spread over them, how far
 * behind one may be, and what happens when one fails. Each is also a constant of
 * {@link RoutingSettings}, which extends this interface.
 */
public interface ReplicaSettings {
    /**
     * JDBC URLs of the hot standbys, comma-separated. Absent or blank, or every URL equal to the
     * primary's: routing is off and Hibernate runs exactly as without this library. Falls back to the
     * environment variable {@code HIBERNATE_ROUTING_REPLICA_URLS} when the setting is absent. A URL
     * may reach several standbys (a load-balanced read endpoint, a pgjdbc multi-host URL, whose
     * commas do not split it): each connection is then decided by the server it reached.
     *
     * @settingDefault none (routing off)
     * @since 0.1
     */
    String REPLICA_URLS = "hibernate.routing.replica_urls";

    /**
     * The hot standbys as data sources the application or its server supplies, instead of
     * {@link #REPLICA_URLS}: JNDI names, comma-separated (looked up through Hibernate's JNDI service),
     * or, in the properties map, a {@code javax.sql.DataSource}, or a collection or array of them
     * (or of names). The library then pools nothing for replicas. Each must give connections that do
     * not join a JTA transaction (a non-JTA, non-XA data source); they are made read-only when they
     * are borrowed.
     *
     * @settingDefault none
     * @since 0.1
     */
    String REPLICA_DATASOURCES = "hibernate.routing.replica_datasources";

    /**
     * User for the replica connections. Falls back to {@code HIBERNATE_ROUTING_REPLICA_USER}, then to
     * the primary's user.
     *
     * @settingDefault the primary's user
     * @since 0.1
     */
    String REPLICA_USER = "hibernate.routing.replica_user";

    /**
     * Password for the replica connections. Falls back to {@code HIBERNATE_ROUTING_REPLICA_PASSWORD},
     * then to the primary's password. Never logged.
     *
     * @settingDefault the primary's password
     * @since 0.1
     */
    String REPLICA_PASSWORD = "hibernate.routing.replica_password";

    /**
     * How a replica is chosen among the eligible ones, a {@link LoadBalancing}.
     *
     * @settingDefault {@value #DEFAULT_LOAD_BALANCING}
     * @since 0.1
     */
    String LOAD_BALANCING = "hibernate.routing.load_balancing";

    /** The default of {@link #LOAD_BALANCING}. */
    String DEFAULT_LOAD_BALANCING = "ROUND_ROBIN";

    /**
     * A replica whose replay position is more than this many bytes of WAL behind the primary gets no
     * reads. {@code 0} disables the byte bound.
     *
     * @settingDefault {@value #DEFAULT_MAX_REPLICA_LAG_BYTES}
     * @since 0.1
     */
    String MAX_REPLICA_LAG_BYTES = "hibernate.routing.max_replica_lag_bytes";

    /** The default of {@link #MAX_REPLICA_LAG_BYTES}. */
    String DEFAULT_MAX_REPLICA_LAG_BYTES = "16MB";

    /**
     * A replica that is behind the primary and last replayed a transaction longer ago than this, or
     * whose last answered health check is older (lag unknown), gets no reads. {@code 0} disables it.
     *
     * @settingDefault {@value #DEFAULT_MAX_REPLICA_LAG}
     * @since 0.1
     */
    String MAX_REPLICA_LAG = "hibernate.routing.max_replica_lag";

    /** The default of {@link #MAX_REPLICA_LAG}. */
    String DEFAULT_MAX_REPLICA_LAG = "10s";

    /**
     * What happens when a replica cannot give a connection, a {@link ReplicaFailure}: {@code FALLBACK}
     * uses another replica or the primary (only before any statement of the unit of work ran on the
     * failed replica); {@code FAIL} throws. A replica not ready yet for a read uses the primary.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_FAILURE}
     * @since 0.1
     */
    String REPLICA_FAILURE = "hibernate.routing.replica_failure";

    /** The default of {@link #REPLICA_FAILURE}. */
    String DEFAULT_REPLICA_FAILURE = "FALLBACK";

    /**
     * How often each replica's health, recovery state and lag are checked in the background.
     *
     * @settingDefault {@value #DEFAULT_HEALTH_CHECK_INTERVAL}
     * @since 0.1
     */
    String HEALTH_CHECK_INTERVAL = "hibernate.routing.health_check_interval";

    /** The default of {@link #HEALTH_CHECK_INTERVAL}. */
    String DEFAULT_HEALTH_CHECK_INTERVAL = "1s";

    /**
     * Consecutive connection failures after which a replica's circuit breaker opens.
     *
     * @settingDefault {@value #DEFAULT_CIRCUIT_BREAKER_FAILURE_THRESHOLD}
     * @since 0.1
     */
    String CIRCUIT_BREAKER_FAILURE_THRESHOLD = "hibernate.routing.circuit_breaker.failure_threshold";

    /** The default of {@link #CIRCUIT_BREAKER_FAILURE_THRESHOLD}. */
    int DEFAULT_CIRCUIT_BREAKER_FAILURE_THRESHOLD = 1;

    /**
     * How long an open circuit breaker keeps a replica out before one trial (half-open).
     *
     * @settingDefault {@value #DEFAULT_CIRCUIT_BREAKER_OPEN_DURATION}
     * @since 0.1
     */
    String CIRCUIT_BREAKER_OPEN_DURATION = "hibernate.routing.circuit_breaker.open_duration";

    /** The default of {@link #CIRCUIT_BREAKER_OPEN_DURATION}. */
    String DEFAULT_CIRCUIT_BREAKER_OPEN_DURATION = "5s";

    /**
     * Whether to verify that each replica is in recovery ({@code pg_is_in_recovery()}); a server that
     * is not (a promoted standby, or a primary given by mistake) is never used as a replica. Turn off
     * only for benchmarks that point a "replica" at the primary.
     *
     * @settingDefault {@value #DEFAULT_CHECK_RECOVERY}
     * @since 0.1
     */
    String CHECK_RECOVERY = "hibernate.routing.check_recovery";

    /** The default of {@link #CHECK_RECOVERY}. */
    boolean DEFAULT_CHECK_RECOVERY = true;

    /**
     * Whether a connection pooler the library finds between it and a replica's standbys runs in session
     * mode (PgBouncer's {@code pool_mode=session}), where each client connection keeps one server
     * connection. A pooler in transaction or statement mode may run each transaction on another standby
     * than the one a connection was checked on, and no client can see a pooler's mode; so a replica
     * behind a pooler is refused unless this says the pooler runs in session mode. Even then, a pooler
     * seen sharing one server connection between two client connections is refused.
     *
     * @settingDefault {@value #DEFAULT_REPLICA_SESSION_POOLER}
     * @since 0.1
     */
    String REPLICA_SESSION_POOLER = "hibernate.routing.replica_session_pooler";

    /** The default of {@link #REPLICA_SESSION_POOLER}. */
    boolean DEFAULT_REPLICA_SESSION_POOLER = false;

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
        /** Surface the error; a replica not ready yet (position, lag, marker) still uses the primary. */
        FAIL
    }
}
