package io.github.hibernaterouting.routing.internal.bootstrap;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.util.PropertyElf;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import java.sql.Connection;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hibernate's own connection settings, read for the library's HikariCP pools: each one that means
 * something for them is applied, the others fail the bootstrap naming the key and what to use
 * instead (the table is in docs/configuration.md). Without routing Hibernate reads them itself; with
 * routing it uses no {@code ConnectionProvider}, so without this they would be silently ignored.
 * Immutable once read.
 */
final class ConnectionSettings {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionSettings.class);

    static final String ISOLATION = "hibernate.connection.isolation";
    static final String AUTOCOMMIT = "hibernate.connection.autocommit";
    static final String PROVIDER_DISABLES_AUTOCOMMIT = "hibernate.connection.provider_disables_autocommit";
    static final String POOL_SIZE = "hibernate.connection.pool_size";
    static final String MIN_POOL_SIZE = "hibernate.connection.min_pool_size";
    static final String INIT_SQL = "hibernate.connection.init_sql";
    static final String LOGIN_TIMEOUT = "hibernate.connection.login_timeout";
    static final String PROVIDER_CLASS = "hibernate.connection.provider_class";
    static final String CONNECTION_PREFIX = "hibernate.connection.";
    static final String HIKARI_PREFIX = "hibernate.hikari.";

    private static final String[] DRIVER_KEYS = {
        "jakarta.persistence.jdbc.driver", "hibernate.connection.driver_class", "javax.persistence.jdbc.driver"
    };
    /** Hibernate's {@code hibernate.connection.*} settings that are not driver properties. */
    private static final Set<String> HIBERNATE_CONNECTION_KEYS = Set.of(
            "url",
            "username",
            "user",
            "password",
            "driver_class",
            "datasource",
            "provider_class",
            "pool_size",
            "min_pool_size",
            "initial_pool_size",
            "pool_validation_interval",
            "isolation",
            "autocommit",
            "provider_disables_autocommit",
            "handling_mode",
            "login_timeout",
            "init_sql",
            "creator_factory_class");
    /** The names under which Hibernate knows its HikariCP integration: the library's pools are HikariCP. */
    private static final Set<String> HIKARI_PROVIDERS = Set.of(
            "hikari",
            "hikaricp",
            "org.hibernate.hikaricp.internal.HikariCPConnectionProvider",
            "org.hibernate.connection.HikariCPConnectionProvider",
            "com.zaxxer.hikari.hibernate.HikariConnectionProvider");

    /** {@code hibernate.connection.isolation} (or {@code hibernate.hikari.transactionIsolation}); null if not set. */
    final Integer isolation;
    /** Whether routed connections start in auto-commit mode, as Hibernate's pools would hand them out. */
    final boolean autoCommit;
    /** The JDBC driver class for every pool, or null to let {@code DriverManager} find it by URL. */
    final String driverClassName;

    final String driverKey;
    /** Driver properties for every pool: the unknown {@code hibernate.connection.*} keys, and the login timeout. */
    final Properties driverProperties = new Properties();
    /** The other {@code hibernate.hikari.*} settings, validated, for every pool. */
    final Properties hikari = new Properties();
    /** SQL run on each new connection of every pool, or null. */
    final String initSql;
    /** A prefix for the pools' names, or null. */
    final String poolName;
    /** {@code hibernate.hikari.initializationFailTimeout} for the primary's pool, or null. */
    final Long initializationFailTimeout;
    /** Pool sizing from Hibernate's or HikariCP's keys, the defaults of the {@code hibernate.routing.*} ones; null if not set. */
    final Integer maximumPoolSize;

    final String maximumPoolSizeKey;
    final Integer minimumIdle;
    final String minimumIdleKey;
    /** {@code hibernate.hikari.connectionTimeout}: the default of the primary's connection timeout only, or null. */
    final Duration primaryConnectionTimeout;

    private ConnectionSettings(Map<String, ?> settings) {
        refuseOtherPools(settings);
        refuseProvider(settings);
        refuse(
                settings,
                "hibernate.connection.initial_pool_size",
                "HikariCP opens connections as needed and keeps 'hibernate.routing.primary.minimum_idle' (and "
                        + "'hibernate.routing.replica.minimum_idle') of them idle: use those");
        refuse(
                settings,
                "hibernate.connection.pool_validation_interval",
                "HikariCP checks a connection before it hands it out; to test idle ones, use 'hibernate.hikari.keepaliveTime'");
        refuse(
                settings,
                "hibernate.connection.creator_factory_class",
                "hibernate-routing's pools create connections through HikariCP and the JDBC driver: remove it");
        for (String key : new String[] {"jdbcUrl", "dataSourceClassName", "dataSource", "dataSourceJNDI"}) {
            refuse(
                    settings,
                    HIKARI_PREFIX + key,
                    "hibernate-routing connects to the primary at 'jakarta.persistence.jdbc.url' and to the replicas "
                            + "at 'hibernate.routing.replica_urls'");
        }
        for (String key : new String[] {"username", "password", "credentials"}) {
            refuse(
                    settings,
                    HIKARI_PREFIX + key,
                    "use 'jakarta.persistence.jdbc.user' and 'jakarta.persistence.jdbc.password' (and "
                            + "'hibernate.routing.replica_user', 'hibernate.routing.replica_password' for the replicas)");
        }
        if (Boolean.parseBoolean(string(settings, HIKARI_PREFIX + "readOnly"))) {
            throw new RoutingConfigurationException(
                    HIKARI_PREFIX + "readOnly",
                    "true",
                    "false or nothing: replica connections are read-only already, and the primary must write. "
                            + "Use Hibernate read-only sessions or Connection.setReadOnly(true) for read-only work");
        }
        isolation = isolation(settings);
        autoCommit = autoCommit(settings);
        String driver = null;
        String driverFrom = null;
        for (String key : DRIVER_KEYS) {
            if (string(settings, key) != null) {
                driver = string(settings, key);
                driverFrom = key;
                break;
            }
        }
        if (string(settings, HIKARI_PREFIX + "driverClassName") != null) {
            driver = string(settings, HIKARI_PREFIX + "driverClassName");
            driverFrom = HIKARI_PREFIX + "driverClassName";
        }
        driverClassName = driver;
        driverKey = driverFrom;
        initSql = joined(string(settings, INIT_SQL), string(settings, HIKARI_PREFIX + "connectionInitSql"));
        poolName = string(settings, HIKARI_PREFIX + "poolName");
        initializationFailTimeout = settings.containsKey(HIKARI_PREFIX + "initializationFailTimeout")
                ? (long) SettingValues.integer(settings, HIKARI_PREFIX + "initializationFailTimeout", null, -1)
                : null;
        final String hikariMax = HIKARI_PREFIX + "maximumPoolSize";
        maximumPoolSizeKey = present(settings, hikariMax) ? hikariMax : present(settings, POOL_SIZE) ? POOL_SIZE : null;
        maximumPoolSize =
                maximumPoolSizeKey == null ? null : SettingValues.integer(settings, maximumPoolSizeKey, null, 1);
        final String hikariMin = HIKARI_PREFIX + "minimumIdle";
        minimumIdleKey =
                present(settings, hikariMin) ? hikariMin : present(settings, MIN_POOL_SIZE) ? MIN_POOL_SIZE : null;
        minimumIdle = minimumIdleKey == null ? null : SettingValues.integer(settings, minimumIdleKey, null, 0);
        final String hikariTimeout = HIKARI_PREFIX + "connectionTimeout";
        primaryConnectionTimeout = present(settings, hikariTimeout)
                ? SettingValues.duration(settings, hikariTimeout, null, Duration.ofMillis(250))
                : null;
        if (present(settings, LOGIN_TIMEOUT)) {
            driverProperties.setProperty(
                    "loginTimeout", String.valueOf(SettingValues.integer(settings, LOGIN_TIMEOUT, null, 0)));
        }
        for (Map.Entry<String, ?> entry : settings.entrySet()) {
            final String key = entry.getKey();
            if (key.startsWith(CONNECTION_PREFIX)
                    && entry.getValue() instanceof String value
                    && !HIBERNATE_CONNECTION_KEYS.contains(key.substring(CONNECTION_PREFIX.length()))) {
                // As Hibernate's own pool does: an unknown hibernate.connection.* key is a driver property.
                driverProperties.setProperty(key.substring(CONNECTION_PREFIX.length()), value);
            } else if (key.startsWith(HIKARI_PREFIX) && entry.getValue() != null) {
                hikariProperty(key, entry.getValue());
            }
        }
    }

    /** Reads and validates Hibernate's connection settings among {@code settings}. */
    static ConnectionSettings from(Map<String, ?> settings) {
        return new ConnectionSettings(settings);
    }

    /** The HikariCP properties the library sets itself, or reads above; every other one goes to every pool. */
    private static final Set<String> HIKARI_OWNED = Set.of(
            "jdbcUrl",
            "username",
            "password",
            "credentials",
            "dataSourceClassName",
            "dataSource",
            "dataSourceJNDI",
            "readOnly",
            "driverClassName",
            "transactionIsolation",
            "autoCommit",
            "connectionInitSql",
            "poolName",
            "initializationFailTimeout",
            "maximumPoolSize",
            "minimumIdle",
            "connectionTimeout");

    private void hikariProperty(String key, Object value) {
        final String name = key.substring(HIKARI_PREFIX.length());
        if (HIKARI_OWNED.contains(name)) {
            return;
        }
        final Properties one = new Properties();
        one.put(name, value);
        try {
            // Checked now, on a configuration of its own, so that a typo fails the bootstrap by name.
            PropertyElf.setTargetFromProperties(new HikariConfig(), one);
        } catch (RuntimeException e) {
            throw new RoutingConfigurationException(
                    key,
                    String.valueOf(value),
                    "a HikariCP configuration property (a setter of com.zaxxer.hikari.HikariConfig, or dataSource.<driver "
                            + "property>) with a value it accepts: " + e.getMessage());
        }
        hikari.put(name, value);
    }

    /** Applies the settings every pool shares to {@code config}; the caller then sets what is the pool's own. */
    void applyTo(HikariConfig config) {
        PropertyElf.setTargetFromProperties(config, hikari);
        if (driverClassName != null) {
            try {
                config.setDriverClassName(driverClassName);
            } catch (RuntimeException e) {
                throw new RoutingConfigurationException(
                        driverKey, driverClassName, "a JDBC driver class on the class path (" + e.getMessage() + ")");
            }
        }
        driverProperties.forEach((name, value) -> config.addDataSourceProperty((String) name, value));
    }

    private static Integer isolation(Map<String, ?> settings) {
        final String hikariKey = HIKARI_PREFIX + "transactionIsolation";
        final String key = settings.get(hikariKey) != null ? hikariKey : ISOLATION;
        final Object value = settings.get(key);
        if (value == null || value.toString().isBlank()) {
            return null;
        }
        final String allowed = "READ_UNCOMMITTED, READ_COMMITTED, REPEATABLE_READ or SERIALIZABLE (also with the "
                + "TRANSACTION_ prefix of java.sql.Connection's constants, in any case), or their JDBC numbers 1, 2, 4, 8";
        final String text = value.toString().trim().toUpperCase(Locale.ROOT);
        final int level = switch (text.startsWith("TRANSACTION_") ? text.substring("TRANSACTION_".length()) : text) {
            case "READ_UNCOMMITTED", "1" -> Connection.TRANSACTION_READ_UNCOMMITTED;
            case "READ_COMMITTED", "2" -> Connection.TRANSACTION_READ_COMMITTED;
            case "REPEATABLE_READ", "4" -> Connection.TRANSACTION_REPEATABLE_READ;
            case "SERIALIZABLE", "8" -> Connection.TRANSACTION_SERIALIZABLE;
            case "NONE", "0" ->
                throw new RoutingConfigurationException(
                        key, value.toString(), allowed + "; PostgreSQL always runs statements in transactions");
            default -> throw new RoutingConfigurationException(key, value.toString(), allowed);
        };
        return level;
    }

    private static boolean autoCommit(Map<String, ?> settings) {
        final String hikariKey = HIKARI_PREFIX + "autoCommit";
        final String key = present(settings, hikariKey) ? hikariKey : AUTOCOMMIT;
        // Under JTA, Hibernate never switches auto-commit and the library follows the global transaction.
        final boolean disabledByProvider = present(settings, PROVIDER_DISABLES_AUTOCOMMIT)
                && SettingValues.bool(settings, PROVIDER_DISABLES_AUTOCOMMIT, null)
                && !DataSourceSettings.jta(settings);
        if (!present(settings, key)) {
            // Hibernate then skips setAutoCommit(false) at begin: the connections must come without it.
            return !disabledByProvider;
        }
        final boolean autoCommit = SettingValues.bool(settings, key, null);
        if (autoCommit && disabledByProvider) {
            throw new RoutingConfigurationException(
                    PROVIDER_DISABLES_AUTOCOMMIT,
                    "true",
                    "false, or '" + key + "=false': it promises Hibernate connections without auto-commit, but '" + key
                            + "' asks for auto-commit");
        }
        return autoCommit;
    }

    private static void refuseOtherPools(Map<String, ?> settings) {
        for (String key : settings.keySet()) {
            if (key.startsWith("hibernate.c3p0.") || key.startsWith("hibernate.agroal.")) {
                throw RoutingConfigurationException.withMessage(
                        key,
                        "'" + key + "' configures a connection pool hibernate-routing does not use: it builds HikariCP "
                                + "pools, one for the primary and one per replica. Use 'hibernate.hikari.*' settings, and "
                                + "'hibernate.routing.primary.*' / 'hibernate.routing.replica.*' for their sizes");
            }
        }
    }

    private static void refuseProvider(Map<String, ?> settings) {
        final Object value = settings.get(PROVIDER_CLASS);
        if (value == null || value.toString().isBlank()) {
            return;
        }
        final String name = value instanceof Class<?> type
                ? type.getName()
                : value instanceof String text ? text.trim() : value.getClass().getName();
        if (HIKARI_PROVIDERS.contains(name) || HIKARI_PROVIDERS.contains(name.toLowerCase(Locale.ROOT))) {
            return;
        }
        throw RoutingConfigurationException.withMessage(
                PROVIDER_CLASS,
                "'" + PROVIDER_CLASS + "' names " + name + ", but while routing is on Hibernate uses no "
                        + "ConnectionProvider: hibernate-routing hands out the connections from its own HikariCP pools. "
                        + "Remove '" + PROVIDER_CLASS + "' (HikariCP's names are accepted), configure the pools with "
                        + "'hibernate.hikari.*' and 'hibernate.routing.primary.*' / 'hibernate.routing.replica.*', or "
                        + "remove '" + RoutingSettings.REPLICA_URLS + "' to switch routing off");
    }

    private static void refuse(Map<String, ?> settings, String key, String instead) {
        if (present(settings, key)) {
            throw RoutingConfigurationException.withMessage(
                    key, "'" + key + "' has no meaning for hibernate-routing's pools: " + instead);
        }
    }

    private static boolean present(Map<String, ?> settings, String key) {
        return string(settings, key) != null;
    }

    private static String string(Map<String, ?> settings, String key) {
        return SettingValues.string(settings, key);
    }

    private static String joined(String first, String second) {
        if (first == null) {
            return second;
        }
        return second == null ? first : first + "; " + second;
    }
}
