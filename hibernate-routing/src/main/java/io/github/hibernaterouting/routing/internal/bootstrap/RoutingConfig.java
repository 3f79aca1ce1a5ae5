package io.github.hibernaterouting.routing.internal.bootstrap;

import static io.github.hibernaterouting.routing.RoutingSettings.*;
import static io.github.hibernaterouting.routing.internal.bootstrap.SettingValues.*;

import io.github.hibernaterouting.routing.ConsistencySettings.ActorStamps;
import io.github.hibernaterouting.routing.ReplicaSettings.LoadBalancing;
import io.github.hibernaterouting.routing.ReplicaSettings.ReplicaFailure;
import io.github.hibernaterouting.routing.ReplicaUrls;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings.TransactionMode;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.sql.internal.Masking;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * The routing settings of one persistence unit, read and validated once at bootstrap; immutable.
 *
 * <p>Defaults are the {@code DEFAULT_} constants of {@link io.github.hibernaterouting.routing.RoutingSettings},
 * parsed like a user's value ({@link SettingValues}).
 */
public final class RoutingConfig {

    static final String ENV_REPLICA_URLS = "HIBERNATE_ROUTING_REPLICA_URLS";
    static final String ENV_REPLICA_USER = "HIBERNATE_ROUTING_REPLICA_USER";
    static final String ENV_REPLICA_PASSWORD = "HIBERNATE_ROUTING_REPLICA_PASSWORD";
    static final String ENV_REDIS_URI = "HIBERNATE_ROUTING_REDIS_URI";

    private static final String[] PRIMARY_URL_KEYS = {
        "jakarta.persistence.jdbc.url", "hibernate.connection.url", "javax.persistence.jdbc.url"
    };
    private static final String[] PRIMARY_USER_KEYS = {
        "jakarta.persistence.jdbc.user",
        "hibernate.connection.username",
        "hibernate.connection.user",
        "javax.persistence.jdbc.user"
    };
    private static final String[] PRIMARY_PASSWORD_KEYS = {
        "jakarta.persistence.jdbc.password", "hibernate.connection.password", "javax.persistence.jdbc.password"
    };
    /** Where Hibernate, a container or a framework puts the persistence unit's data source. */
    private static final String[] PRIMARY_DATASOURCE_KEYS = {
        "hibernate.connection.datasource",
        "jakarta.persistence.jtaDataSource",
        "jakarta.persistence.nonJtaDataSource",
        "javax.persistence.jtaDataSource",
        "javax.persistence.nonJtaDataSource"
    };

    public final String primaryUrl;
    /**
     * The primary as a data source the application or its server supplies (a {@code DataSource} or a
     * JNDI name), or {@code null} when the library builds a pool from {@link #primaryUrl}.
     */
    public final Object primaryDataSource;
    /** Replicas as supplied data sources ({@code DataSource}s or JNDI names); empty with {@link #replicaUrls}. */
    public final List<Object> replicaDataSources;
    /** Whether the persistence unit's transactions are JTA transactions. */
    public final boolean jta;

    public final String primaryUser;
    final String primaryPassword;
    public final List<String> replicaUrls;
    public final String replicaUser;
    final String replicaPassword;
    public final Strategy strategy;
    public final TransactionMode transactions;
    public final LoadBalancing loadBalancing;
    public final long maxReplicaLagBytes;
    public final Duration maxReplicaLag;
    public final ReplicaFailure replicaFailure;
    public final Duration healthCheckInterval;
    public final int circuitBreakerFailureThreshold;
    public final Duration circuitBreakerOpenDuration;
    public final PoolConfig primaryPool;
    public final PoolConfig replicaPool;
    public final int classifierCacheSize;
    public final boolean loadCatalog;
    public final boolean checkRecovery;
    /** {@code replica_session_pooler}: a pooler found in front of a replica is trusted to run in session mode. */
    public final boolean replicaSessionPooler;
    /** The registry given in {@code meter_registry}, or null for Micrometer's global one. */
    public final MeterRegistry meterRegistry;
    /** The persistence unit's name, a tag of every meter; "default" when Hibernate was bootstrapped without one. */
    public final String persistenceUnit;

    public final ActorStamps actorStamps;
    public final String actorStampsTable;
    public final String actorStampsKeyColumn;
    public final String actorStampsColumn;
    public final Duration actorStampsMemoryTtl;
    public final int actorStampsMemoryCapacity;
    final String redisUri;
    public final String redisPrefix;
    public final Duration redisWindow;
    /** {@code second_level_cache.shared}: the second-level cache is one for every instance. */
    public final boolean secondLevelCacheShared;

    public final Duration redisTimeout;
    public final Duration lsnWait;
    public final Duration lsnPollInterval;
    /** Hibernate's own connection settings, for the pools and the routed connections. */
    final ConnectionSettings connection;

    /** Pool sizing for one kind of target. */
    public record PoolConfig(int maximumPoolSize, int minimumIdle, Duration connectionTimeout, PoolTuning tuning) {}

    private RoutingConfig(Map<String, ?> settings, UnaryOperator<String> env) {
        SettingKeys.requireKnown(settings);
        primaryDataSource = DataSourceSettings.primary(settings, PRIMARY_DATASOURCE_KEYS);
        replicaDataSources = DataSourceSettings.replicas(settings);
        jta = DataSourceSettings.jta(settings);
        primaryUrl = primaryDataSource != null ? null : first(settings, PRIMARY_URL_KEYS);
        primaryUser = first(settings, PRIMARY_USER_KEYS);
        primaryPassword = first(settings, PRIMARY_PASSWORD_KEYS);
        replicaUrls = replicaUrls(settings, env, primaryUrl);
        replicaUser = orElse(orElse(string(settings, REPLICA_USER), env.apply(ENV_REPLICA_USER)), primaryUser);
        replicaPassword =
                orElse(orElse(string(settings, REPLICA_PASSWORD), env.apply(ENV_REPLICA_PASSWORD)), primaryPassword);
        connection = ConnectionSettings.from(settings);
        strategy = Strategy.interpret(orElse(string(settings, STRATEGY), DEFAULT_STRATEGY), STRATEGY);
        transactions = enumValue(settings, TRANSACTIONS, TransactionMode.class, DEFAULT_TRANSACTIONS);
        loadBalancing = enumValue(settings, LOAD_BALANCING, LoadBalancing.class, DEFAULT_LOAD_BALANCING);
        maxReplicaLagBytes = bytes(settings, MAX_REPLICA_LAG_BYTES, DEFAULT_MAX_REPLICA_LAG_BYTES);
        maxReplicaLag = duration(settings, MAX_REPLICA_LAG, DEFAULT_MAX_REPLICA_LAG, Duration.ZERO);
        replicaFailure = enumValue(settings, REPLICA_FAILURE, ReplicaFailure.class, DEFAULT_REPLICA_FAILURE);
        healthCheckInterval =
                duration(settings, HEALTH_CHECK_INTERVAL, DEFAULT_HEALTH_CHECK_INTERVAL, Duration.ofMillis(10));
        circuitBreakerFailureThreshold =
                integer(settings, CIRCUIT_BREAKER_FAILURE_THRESHOLD, DEFAULT_CIRCUIT_BREAKER_FAILURE_THRESHOLD, 1);
        circuitBreakerOpenDuration =
                duration(settings, CIRCUIT_BREAKER_OPEN_DURATION, DEFAULT_CIRCUIT_BREAKER_OPEN_DURATION, Duration.ZERO);
        // hibernate.hikari.* and hibernate.connection.pool_size / min_pool_size are the defaults of both kinds of pool.
        final Object maximumPoolSize = connection.maximumPoolSize;
        final Object minimumIdle = connection.minimumIdle;
        primaryPool = pool(
                PoolTuning::primary,
                integer(
                        settings,
                        PRIMARY_MAXIMUM_POOL_SIZE,
                        orElse(maximumPoolSize, DEFAULT_PRIMARY_MAXIMUM_POOL_SIZE),
                        1),
                integer(settings, PRIMARY_MINIMUM_IDLE, orElse(minimumIdle, DEFAULT_PRIMARY_MINIMUM_IDLE), 0),
                duration(
                        settings,
                        PRIMARY_CONNECTION_TIMEOUT,
                        orElse(connection.primaryConnectionTimeout, DEFAULT_PRIMARY_CONNECTION_TIMEOUT),
                        Duration.ofMillis(250)),
                settings);
        replicaPool = pool(
                PoolTuning::replica,
                integer(
                        settings,
                        REPLICA_MAXIMUM_POOL_SIZE,
                        orElse(maximumPoolSize, DEFAULT_REPLICA_MAXIMUM_POOL_SIZE),
                        1),
                integer(settings, REPLICA_MINIMUM_IDLE, orElse(minimumIdle, DEFAULT_REPLICA_MINIMUM_IDLE), 0),
                duration(
                        settings,
                        REPLICA_CONNECTION_TIMEOUT,
                        DEFAULT_REPLICA_CONNECTION_TIMEOUT,
                        Duration.ofMillis(250)),
                settings);
        classifierCacheSize = integer(settings, CLASSIFIER_CACHE_SIZE, DEFAULT_CLASSIFIER_CACHE_SIZE, 0);
        loadCatalog = bool(settings, CLASSIFIER_LOAD_CATALOG, DEFAULT_CLASSIFIER_LOAD_CATALOG);
        checkRecovery = bool(settings, CHECK_RECOVERY, DEFAULT_CHECK_RECOVERY);
        replicaSessionPooler = bool(settings, REPLICA_SESSION_POOLER, DEFAULT_REPLICA_SESSION_POOLER);
        meterRegistry = RuntimeObjects.meterRegistry(settings.get(METER_REGISTRY));
        persistenceUnit = orElse(string(settings, "hibernate.persistenceUnitName"), "default");
        actorStamps = enumValue(settings, ACTOR_STAMPS, ActorStamps.class, DEFAULT_ACTOR_STAMPS);
        actorStampsTable = identifier(settings, ACTOR_STAMPS_TABLE, DEFAULT_ACTOR_STAMPS_TABLE, true);
        actorStampsKeyColumn = identifier(settings, ACTOR_STAMPS_KEY_COLUMN, DEFAULT_ACTOR_STAMPS_KEY_COLUMN, false);
        actorStampsColumn = identifier(settings, ACTOR_STAMPS_COLUMN, DEFAULT_ACTOR_STAMPS_COLUMN, false);
        actorStampsMemoryTtl =
                duration(settings, ACTOR_STAMPS_MEMORY_TTL, DEFAULT_ACTOR_STAMPS_MEMORY_TTL, Duration.ofSeconds(1));
        actorStampsMemoryCapacity =
                integer(settings, ACTOR_STAMPS_MEMORY_CAPACITY, DEFAULT_ACTOR_STAMPS_MEMORY_CAPACITY, 1);
        redisUri = redisUri(settings, env);
        redisPrefix = orElse(string(settings, REDIS_PREFIX), DEFAULT_REDIS_PREFIX);
        redisWindow = MarkerWindow.of(settings, redisUri != null, maxReplicaLag, healthCheckInterval);
        secondLevelCacheShared = bool(settings, SECOND_LEVEL_CACHE_SHARED, DEFAULT_SECOND_LEVEL_CACHE_SHARED);
        redisTimeout = duration(settings, REDIS_TIMEOUT, DEFAULT_REDIS_TIMEOUT, Duration.ofMillis(10));
        lsnWait = duration(settings, LSN_WAIT, DEFAULT_LSN_WAIT, Duration.ZERO);
        lsnPollInterval = duration(settings, LSN_POLL_INTERVAL, DEFAULT_LSN_POLL_INTERVAL, Duration.ofMillis(1));
        checkPoolSizes(
                primaryPool, source(settings, PRIMARY_MINIMUM_IDLE), source(settings, PRIMARY_MAXIMUM_POOL_SIZE));
        checkPoolSizes(
                replicaPool, source(settings, REPLICA_MINIMUM_IDLE), source(settings, REPLICA_MAXIMUM_POOL_SIZE));
        if (routingEnabled() && primaryUrl != null) {
            if (!primaryUrl.startsWith("jdbc:postgresql:")) {
                throw new RoutingConfigurationException(
                        primaryUrlKey(settings),
                        primaryUrl,
                        "the primary's PostgreSQL JDBC URL, such as jdbc:postgresql://primary:5432/app, as the "
                                + "replicas' are: hibernate-routing routes between PostgreSQL servers only");
            }
            refuseUserInfo(primaryUrlKey(settings), primaryUrl);
        }
        DataSourceSettings.check(this, settings);
    }

    /**
     * Reads and validates the settings.
     *
     * @param settings the persistence unit's configuration values
     * @param env environment lookup (normally {@code System::getenv})
     * @throws RoutingConfigurationException naming the first bad setting
     */
    public static RoutingConfig from(Map<String, ?> settings, UnaryOperator<String> env) {
        return new RoutingConfig(settings, env);
    }

    /** Whether any replica is configured; without one the library stays out of the way entirely. */
    public boolean routingEnabled() {
        return !replicaUrls.isEmpty() || !replicaDataSources.isEmpty();
    }

    /** How many replicas are configured, as URLs or as data sources. */
    public int replicaCount() {
        return replicaDataSources.isEmpty() ? replicaUrls.size() : replicaDataSources.size();
    }

    /** Whether {@code settings} ask for routing, without validating the rest; used before services exist. */
    public static boolean routingRequested(Map<String, ?> settings, UnaryOperator<String> env) {
        if (DataSourceSettings.replicasRequested(settings)) {
            return true;
        }
        final String primary = first(settings, PRIMARY_URL_KEYS);
        final Object raw =
                settings.containsKey(REPLICA_URLS) ? settings.get(REPLICA_URLS) : env.apply(ENV_REPLICA_URLS);
        if (raw == null) {
            return false;
        }
        for (String url : ReplicaUrlList.split(raw.toString())) {
            if (!url.equals(primary)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> replicaUrls(Map<String, ?> settings, UnaryOperator<String> env, String primaryUrl) {
        final Object raw =
                settings.containsKey(REPLICA_URLS) ? settings.get(REPLICA_URLS) : env.apply(ENV_REPLICA_URLS);
        if (raw == null) {
            return List.of();
        }
        final String key = settings.containsKey(REPLICA_URLS) ? REPLICA_URLS : ENV_REPLICA_URLS;
        final Set<String> urls = new LinkedHashSet<>();
        for (String url : ReplicaUrlList.split(raw.toString())) {
            ReplicaUrls.check(
                    key, url, "comma-separated PostgreSQL JDBC URLs such as jdbc:postgresql://replica1:5432/app");
            if (url.equals(primaryUrl)) {
                // A replica URL equal to the primary's means "no separate replica": share the primary pool.
                continue;
            }
            if (!urls.add(url)) {
                throw new RoutingConfigurationException(
                        key, Masking.url(url), "each replica listed once (this URL appears twice)");
            }
        }
        return List.copyOf(new ArrayList<>(urls));
    }

    /** pgjdbc reads no credentials from a URL's user-info: it would take them for a host name, and print them. */
    private static void refuseUserInfo(String key, String url) {
        if (Masking.hasUserInfo(url)) {
            throw new RoutingConfigurationException(
                    key,
                    url,
                    "a JDBC URL without user-info (user:password@): the PostgreSQL driver takes it for a host name. "
                            + "Give the user and password as jakarta.persistence.jdbc.user and .password (replicas: "
                            + REPLICA_USER + ", " + REPLICA_PASSWORD + "), or as user= and password= parameters");
        }
    }

    private static String primaryUrlKey(Map<String, ?> settings) {
        for (String key : PRIMARY_URL_KEYS) {
            if (string(settings, key) != null) {
                return key;
            }
        }
        return PRIMARY_URL_KEYS[0];
    }

    private static String redisUri(Map<String, ?> settings, UnaryOperator<String> env) {
        final String uri = orElse(string(settings, REDIS_URI), env.apply(ENV_REDIS_URI));
        if (uri == null || uri.isBlank()) {
            return null;
        }
        final String key = string(settings, REDIS_URI) != null ? REDIS_URI : ENV_REDIS_URI;
        if (!(uri.startsWith("redis://") || uri.startsWith("rediss://") || uri.startsWith("redis-sentinel://"))) {
            throw new RoutingConfigurationException(
                    key,
                    Masking.url(uri),
                    "a Redis URI such as redis://127.0.0.1:6379 or redis-sentinel://host:26379/?sentinelMasterId=mymaster");
        }
        RuntimeObjects.requireLettuce(key);
        return uri.trim();
    }

    /** Whether the shared Redis marker is configured. */
    public boolean redisEnabled() {
        return redisUri != null;
    }

    /** A table or column name: letters, digits and underscores (and one dot for a schema), so it can go into SQL as is. */
    private static String identifier(Map<String, ?> settings, String key, String fallback, boolean qualified) {
        final String value = orElse(string(settings, key), fallback);
        final String part = "[A-Za-z_][A-Za-z0-9_]{0,62}";
        if (!value.matches(qualified ? part + "(\\." + part + ")?" : part)) {
            throw new RoutingConfigurationException(
                    key,
                    value,
                    qualified
                            ? "a table name of letters, digits and underscores, optionally schema-qualified (for example public.users)"
                            : "a column name of letters, digits and underscores");
        }
        return value;
    }

    private interface PoolTuningReader {
        PoolTuning read(Map<String, ?> settings, java.util.Properties hikari, Duration connectionTimeout);
    }

    private PoolConfig pool(
            PoolTuningReader tuning,
            int maximumPoolSize,
            int minimumIdle,
            Duration connectionTimeout,
            Map<String, ?> settings) {
        return new PoolConfig(
                maximumPoolSize,
                minimumIdle,
                connectionTimeout,
                tuning.read(settings, connection.hikari, connectionTimeout));
    }

    /** The key a pool size came from: the routing key if set, else the Hibernate or HikariCP one it defaulted to. */
    private String source(Map<String, ?> settings, String routingKey) {
        if (string(settings, routingKey) != null) {
            return routingKey;
        }
        final String other =
                routingKey.endsWith("minimum_idle") ? connection.minimumIdleKey : connection.maximumPoolSizeKey;
        return other != null ? other : routingKey;
    }

    private static void checkPoolSizes(PoolConfig pool, String minKey, String maxKey) {
        if (pool.minimumIdle() > pool.maximumPoolSize()) {
            throw new RoutingConfigurationException(
                    minKey,
                    String.valueOf(pool.minimumIdle()),
                    "a number no larger than '" + maxKey + "' (" + pool.maximumPoolSize() + ")");
        }
    }

    private static String first(Map<String, ?> settings, String[] keys) {
        for (String key : keys) {
            final String value = string(settings, key);
            if (value != null) {
                return value;
            }
        }
        return null;
    }

    private static <T> T orElse(T value, T fallback) {
        return value != null ? value : fallback;
    }

    /** The configuration as a log line: URLs masked, passwords never included. */
    @Override
    public String toString() {
        return "RoutingConfig[primary="
                + (primaryDataSource != null ? DataSourceSettings.describe(primaryDataSource) : Masking.url(primaryUrl))
                + (jta ? " (JTA)" : "")
                + ", replicas="
                + (replicaDataSources.isEmpty()
                        ? replicaUrls.stream().map(Masking::url).collect(Collectors.toList())
                        : replicaDataSources.stream()
                                .map(DataSourceSettings::describe)
                                .collect(Collectors.toList()))
                + ", strategy=" + strategy + ", transactions=" + transactions + ", loadBalancing=" + loadBalancing
                + ", maxReplicaLagBytes=" + maxReplicaLagBytes + ", maxReplicaLag=" + maxReplicaLag
                + ", replicaFailure=" + replicaFailure + ", healthCheckInterval=" + healthCheckInterval
                + ", actorStamps=" + actorStamps + ", redis=" + (redisUri == null ? "off" : Masking.url(redisUri))
                + "]";
    }
}
