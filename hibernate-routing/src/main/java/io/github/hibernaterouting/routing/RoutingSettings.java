package io.github.hibernaterouting.routing;

/**
 * Every setting of hibernate-routing, as persistence-unit properties: those here, and through the
 * interfaces it extends, those of the replicas ({@link ReplicaSettings}), of the library's own pools
 * ({@link PoolSettings}) and of read-your-writes ({@link ConsistencySettings}).
 *
 * <p>Settings are read once, when the persistence unit is built, and validated then: a bad value
 * fails the bootstrap with a {@link RoutingConfigurationException} naming the key, the value and
 * what is allowed. The primary is the persistence unit's own connection source: its data source
 * ({@code <jta-data-source>}, {@code <non-jta-data-source>}, {@code hibernate.connection.datasource},
 * as an object or a JNDI name), or else its {@code jakarta.persistence.jdbc.url} (or
 * {@code hibernate.connection.url}) with its user and password, for which the library builds its
 * own pool.
 *
 * <p>Durations accept ISO-8601 ({@code PT5S}) or a number with a unit: {@code 250ms}, {@code 5s},
 * {@code 2m}, {@code 1h}; a bare number means milliseconds. Sizes in bytes accept a bare number or
 * a number with {@code kB}, {@code MB}, {@code GB} (powers of 1024).
 */
public interface RoutingSettings extends ReplicaSettings, PoolSettings, ConsistencySettings {
    /** Prefix of every key. */
    String PREFIX = "hibernate.routing.";

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
     * The Micrometer {@code MeterRegistry} instance to record meters in; any other value fails.
     *
     * @settingDefault {@code io.micrometer.core.instrument.Metrics.globalRegistry}
     * @since 0.1
     */
    String METER_REGISTRY = PREFIX + "meter_registry";

    /** Values of {@link #TRANSACTIONS}. */
    enum TransactionMode {
        /** Start on a replica, move to the primary at the first write. */
        LAZY,
        /** Pin read-write transactions to the primary from {@code begin}. */
        PRIMARY
    }
}
