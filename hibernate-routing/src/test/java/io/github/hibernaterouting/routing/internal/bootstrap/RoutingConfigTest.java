package io.github.hibernaterouting.routing.internal.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.jdbc.JdbcRouting;
import java.sql.Connection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RoutingConfigTest {
    private static final String PRIMARY = "jdbc:postgresql://127.0.0.1:5432/app";
    private static final String REPLICA = "jdbc:postgresql://127.0.0.1:5433/app";

    private static Map<String, Object> base() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("jakarta.persistence.jdbc.url", PRIMARY);
        settings.put("jakarta.persistence.jdbc.user", "app");
        settings.put("jakarta.persistence.jdbc.password", "s3cret-pw");
        settings.put(RoutingSettings.REPLICA_URLS, REPLICA);
        return settings;
    }

    private static RoutingConfig config(Map<String, Object> settings) {
        return RoutingConfig.from(settings, name -> null);
    }

    @ParameterizedTest
    @CsvSource({"0", "-5", "many", "3000000000"})
    void memoryCapacity_thatIsNotAPositiveWholeNumber_failsAtBootstrapNamingTheKey(String value) {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.ACTOR_STAMPS_MEMORY_CAPACITY, value);
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining(RoutingSettings.ACTOR_STAMPS_MEMORY_CAPACITY)
                .hasMessageContaining("at least 1");
    }

    @Test
    void memoryCapacity_defaultsToAHundredThousandActors() {
        assertThat(config(base()).actorStampsMemoryCapacity).isEqualTo(100_000);
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.ACTOR_STAMPS_MEMORY_CAPACITY, "100");
        assertThat(config(settings).actorStampsMemoryCapacity).isEqualTo(100);
    }

    @Test
    void markerWindow_byDefault_outlastsTheLagBoundAsApplied_plusASecondForTheClocks() {
        assertThat(config(base()).redisWindow).as("10 s bound + 1 s").isEqualTo(Duration.ofSeconds(11));
        final Map<String, Object> longBound = base();
        longBound.put(RoutingSettings.MAX_REPLICA_LAG, "30s");
        assertThat(config(longBound).redisWindow).isEqualTo(Duration.ofSeconds(31));
        final Map<String, Object> slowChecks = base();
        slowChecks.put(RoutingSettings.MAX_REPLICA_LAG, "2s");
        slowChecks.put(RoutingSettings.HEALTH_CHECK_INTERVAL, "5s");
        assertThat(config(slowChecks).redisWindow)
                .as("a bound is applied as at least three health-check intervals")
                .isEqualTo(Duration.ofSeconds(16));
        final Map<String, Object> noTimeBound = base();
        noTimeBound.put(RoutingSettings.MAX_REPLICA_LAG, "0");
        assertThat(config(noTimeBound).redisWindow).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void markerWindowShorterThanTheLagBound_failsTheBootstrap_namingBothSettingsAndTheMinimum() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.REDIS_URI, "redis://127.0.0.1:6379");
        settings.put(RoutingSettings.REDIS_WINDOW, "10s");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("'10s' for 'hibernate.routing.redis.window'")
                .hasMessageContaining("at least 11000ms")
                .hasMessageContaining(RoutingSettings.MAX_REPLICA_LAG)
                .hasMessageContaining(RoutingSettings.REDIS_ALLOW_SHORT_WINDOW);
        settings.put(RoutingSettings.REDIS_WINDOW, "11s");
        assertThat(config(settings).redisWindow).isEqualTo(Duration.ofSeconds(11));
        settings.put(RoutingSettings.REDIS_WINDOW, "1s");
        settings.put(RoutingSettings.REDIS_ALLOW_SHORT_WINDOW, "true");
        assertThat(config(settings).redisWindow).as("accepted on request").isEqualTo(Duration.ofSeconds(1));
        final Map<String, Object> withoutRedis = base();
        withoutRedis.put(RoutingSettings.REDIS_WINDOW, "1s");
        assertThat(config(withoutRedis).redisWindow)
                .as("no marker, nothing to check")
                .isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void defaults_applyWhenOnlyReplicaUrlsAreSet() {
        final RoutingConfig config = config(base());
        assertThat(config.routingEnabled()).isTrue();
        assertThat(config.strategy).isEqualTo(Strategy.READ_AFTER_WRITE);
        assertThat(config.transactions).isEqualTo(RoutingSettings.TransactionMode.LAZY);
        assertThat(config.maxReplicaLagBytes).isEqualTo(16L * 1024 * 1024);
        assertThat(config.maxReplicaLag).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.replicaUser)
                .as("replica credentials default to the primary's")
                .isEqualTo("app");
        assertThat(config.replicaPassword).isEqualTo("s3cret-pw");
    }

    @Test
    void replicaUrlEqualToPrimary_meansNoRouting() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.REPLICA_URLS, PRIMARY + " , ");
        assertThat(config(settings).routingEnabled()).isFalse();
        assertThat(RoutingConfig.routingRequested(settings, name -> null)).isFalse();
    }

    @Test
    void replicaUrls_fallBackToTheEnvironment() {
        final Map<String, Object> settings = base();
        settings.remove(RoutingSettings.REPLICA_URLS);
        final RoutingConfig config = RoutingConfig.from(
                settings,
                name -> name.equals("HIBERNATE_ROUTING_REPLICA_URLS")
                        ? REPLICA
                        : name.equals("HIBERNATE_ROUTING_REPLICA_PASSWORD") ? "other" : null);
        assertThat(config.replicaUrls).containsExactly(REPLICA);
        assertThat(config.replicaPassword).isEqualTo("other");
    }

    @Test
    void malformedReplicaUrl_failsNamingKeyAndFix_withoutThePassword() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.REPLICA_URLS, "postgres://u:topsecret@replica/app?password=topsecret");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining(RoutingSettings.REPLICA_URLS)
                .hasMessageContaining("jdbc:postgresql://")
                .hasMessageNotContaining("topsecret");
    }

    @Test
    void unknownStrategy_failsListingTheAllowedValues() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.STRATEGY, "FASTEST");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("FASTEST")
                .hasMessageContaining(RoutingSettings.STRATEGY)
                .hasMessageContaining("READ_AFTER_WRITE, STALE_READ, PRIMARY, REPLICA");
    }

    @ParameterizedTest
    @CsvSource({
        "hibernate.routing.max_replica_lag_bytes, -1",
        "hibernate.routing.max_replica_lag_bytes, lots",
        "hibernate.routing.max_replica_lag, -5s",
        "hibernate.routing.max_replica_lag, soon",
        "hibernate.routing.health_check_interval, 0",
        "hibernate.routing.replica.connection_timeout, 10ms",
        "hibernate.routing.primary.maximum_pool_size, 0",
        "hibernate.routing.transactions, EAGER",
        "hibernate.routing.replica_failure, IGNORE",
        "hibernate.routing.load_balancing, RANDOM",
        "hibernate.routing.check_recovery, maybe",
    })
    void badValue_failsAtBootstrapNamingTheKey(String key, String value) {
        final Map<String, Object> settings = base();
        settings.put(key, value);
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining(key)
                .hasMessageContaining(value)
                .extracting(e -> ((RoutingConfigurationException) e).getKey())
                .isEqualTo(key);
    }

    @ParameterizedTest
    @CsvSource({"500ms, 500", "5s, 5000", "1.5s, 1500", "2m, 120000", "PT3S, 3000", "250, 250"})
    void durations_acceptUnitsAndIso8601(String text, long millis) {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.MAX_REPLICA_LAG, text);
        assertThat(config(settings).maxReplicaLag.toMillis()).isEqualTo(millis);
    }

    @ParameterizedTest
    @CsvSource({"0, 0", "1024, 1024", "64kB, 65536", "16MB, 16777216", "1GB, 1073741824"})
    void byteSizes_acceptUnits(String text, long bytes) {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.MAX_REPLICA_LAG_BYTES, text);
        assertThat(config(settings).maxReplicaLagBytes).isEqualTo(bytes);
    }

    @Test
    void enumSettings_acceptTheEnumOrItsNameInAnyCase() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.STRATEGY, Strategy.STALE_READ);
        settings.put(RoutingSettings.TRANSACTIONS, "primary");
        settings.put(RoutingSettings.LOAD_BALANCING, "least-lag");
        final RoutingConfig config = config(settings);
        assertThat(config.strategy).isEqualTo(Strategy.STALE_READ);
        assertThat(config.transactions).isEqualTo(RoutingSettings.TransactionMode.PRIMARY);
        assertThat(config.loadBalancing).isEqualTo(RoutingSettings.LoadBalancing.LEAST_LAG);
    }

    @Test
    void duplicateReplica_isRejected() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.REPLICA_URLS, REPLICA + "," + REPLICA);
        assertThatThrownBy(() -> config(settings)).hasMessageContaining("twice");
    }

    @Test
    void replicasWithoutPrimary_fail() {
        final Map<String, Object> settings = base();
        settings.remove("jakarta.persistence.jdbc.url");
        assertThatThrownBy(() -> config(settings)).hasMessageContaining("jakarta.persistence.jdbc.url");
    }

    @Test
    void toString_neverShowsPasswords() {
        final Map<String, Object> settings = base();
        settings.put("jakarta.persistence.jdbc.url", PRIMARY + "?password=s3cret-pw");
        settings.put(RoutingSettings.REPLICA_URLS, "jdbc:postgresql://127.0.0.1:5433/app?sslpassword=s3cret-pw");
        settings.put(RoutingSettings.REDIS_URI, "redis://cache-user:s3cret-pw@127.0.0.1:6379");
        assertThat(config(settings).toString()).doesNotContain("s3cret-pw").contains("****");
    }

    @Test
    void meterRegistryThatIsNotOne_failsNamingTheTypeGivenAndTheTypeExpected() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.METER_REGISTRY, "prometheus");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining(RoutingSettings.METER_REGISTRY)
                .hasMessageContaining("java.lang.String")
                .hasMessageContaining("io.micrometer.core.instrument.MeterRegistry");
        settings.put(RoutingSettings.METER_REGISTRY, new Object());
        assertThatThrownBy(() -> config(settings)).hasMessageContaining("java.lang.Object");
        settings.put(RoutingSettings.METER_REGISTRY, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
        assertThat(config(settings).meterRegistry).isInstanceOf(io.micrometer.core.instrument.MeterRegistry.class);
    }

    @Test
    void primaryThatIsNotAPostgresqlUrl_failsNamingTheKeyAndTheForm_asForTheReplicas() {
        for (String key : List.of("jakarta.persistence.jdbc.url", "hibernate.connection.url")) {
            final Map<String, Object> settings = base();
            settings.remove("jakarta.persistence.jdbc.url");
            settings.put(key, "jdbc:mysql://db:3306/app?password=s3cret-pw");
            assertThatThrownBy(() -> config(settings))
                    .isInstanceOf(RoutingConfigurationException.class)
                    .hasMessageContaining("'" + key + "'")
                    .hasMessageContaining("jdbc:postgresql:")
                    .hasMessageNotContaining("s3cret-pw");
        }
    }

    // Split at every comma, a multi-host URL was refused with its tail quoted ("s2:5432/app") and no reason. It is
    // one replica now, whose connections are each decided by the server they reached.
    @Test
    void multiHostReplicaUrl_isOneReplica() {
        final Map<String, Object> settings = base();
        final String multiHost =
                "jdbc:postgresql://s1:5432,s2:5433/app?targetServerType=preferSecondary&loadBalanceHosts=true";
        settings.put(RoutingSettings.REPLICA_URLS, multiHost + ", " + REPLICA);
        assertThat(config(settings).replicaUrls).containsExactly(multiHost, REPLICA);
    }

    @Test
    void replicaUrls_commasInsideAUrlsParameters_doNotSplitIt() {
        final Map<String, Object> settings = base();
        final String withOptions = REPLICA + "?options=-c%20search_path=app,public";
        settings.put(RoutingSettings.REPLICA_URLS, withOptions + " , jdbc:postgresql://127.0.0.1:5434/app,");
        assertThat(config(settings).replicaUrls).containsExactly(withOptions, "jdbc:postgresql://127.0.0.1:5434/app");
    }

    @Test
    void replicaUrls_anEntryAfterACommaThatIsNotAJdbcUrl_isRefusedByItself() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.REPLICA_URLS, REPLICA + ",replica2:5432/app");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("'replica2:5432/app'")
                .hasMessageContaining("comma-separated PostgreSQL JDBC URLs");
    }

    @Test
    void jdbcUrlWithUserInfo_failsNamingTheKeyAndTheFix_withoutThePassword() {
        for (String key : List.of("jakarta.persistence.jdbc.url", RoutingSettings.REPLICA_URLS)) {
            final Map<String, Object> settings = base();
            settings.put(key, "jdbc:postgresql://u:s3cret-pw@127.0.0.1:5433/app");
            assertThatThrownBy(() -> config(settings))
                    .isInstanceOf(RoutingConfigurationException.class)
                    .hasMessageContaining("'" + key + "'")
                    .hasMessageContaining("without user-info")
                    .hasMessageContaining("jakarta.persistence.jdbc.user")
                    .hasMessageNotContaining("s3cret-pw");
        }
    }

    @Test
    void valueOfASettingNamedForASecret_isMaskedInTheMessage() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.hikari.dataSourcePassword", "s3cret-pw");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.hikari.dataSourcePassword")
                .hasMessageNotContaining("s3cret-pw");
    }

    // ---- Hibernate's connection settings ---------------------------------------------------------

    @ParameterizedTest
    @CsvSource({
        "SERIALIZABLE, 8",
        "TRANSACTION_SERIALIZABLE, 8",
        "serializable, 8",
        "8, 8",
        "REPEATABLE_READ, 4",
        "TRANSACTION_REPEATABLE_READ, 4",
        "4, 4",
        "READ_COMMITTED, 2",
        "2, 2",
        "READ_UNCOMMITTED, 1",
        "1, 1"
    })
    void hibernateConnectionIsolation_acceptsHibernatesNamesAndTheJdbcNumbers(String value, int level) {
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.isolation", value);
        final RoutingConfig config = config(settings);
        assertThat(config.connection.isolation).isEqualTo(level);
        assertThat(OwnPools.primary(config).getTransactionIsolation()).startsWith("TRANSACTION_");
    }

    @Test
    void hibernateConnectionIsolation_asAnInteger_andHikarisFormWins() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.isolation", 2);
        assertThat(config(settings).connection.isolation).isEqualTo(Connection.TRANSACTION_READ_COMMITTED);
        settings.put("hibernate.hikari.transactionIsolation", "TRANSACTION_REPEATABLE_READ");
        assertThat(config(settings).connection.isolation).isEqualTo(Connection.TRANSACTION_REPEATABLE_READ);
    }

    @ParameterizedTest
    @CsvSource({"NONE", "TRANSACTION_NONE", "0", "SNAPSHOT", "3"})
    void hibernateConnectionIsolation_otherValues_failNamingTheKey(String value) {
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.isolation", value);
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.connection.isolation")
                .hasMessageContaining("SERIALIZABLE");
    }

    @Test
    void isolation_serializableGoesToThePrimarysPoolOnly_otherLevelsToEveryPool() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.isolation", "SERIALIZABLE");
        RoutingConfig config = config(settings);
        assertThat(OwnPools.primary(config).getTransactionIsolation()).isEqualTo("TRANSACTION_SERIALIZABLE");
        assertThat(OwnPools.replica(config, 0).getTransactionIsolation())
                .as("a standby refuses SERIALIZABLE")
                .isNull();
        settings.put("hibernate.connection.isolation", "REPEATABLE_READ");
        config = config(settings);
        assertThat(OwnPools.replica(config, 0).getTransactionIsolation()).isEqualTo("TRANSACTION_REPEATABLE_READ");
    }

    @Test
    void autocommit_defaultsToOn_andFollowsHibernatesSettings() {
        assertThat(config(base()).connection.autoCommit).isTrue();
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.autocommit", "false");
        assertThat(config(settings).connection.autoCommit).isFalse();
        settings.remove("hibernate.connection.autocommit");
        settings.put("hibernate.connection.provider_disables_autocommit", "true");
        assertThat(config(settings).connection.autoCommit)
                .as("Hibernate then relies on connections without auto-commit")
                .isFalse();
        settings.put("hibernate.hikari.autoCommit", "false");
        assertThat(config(settings).connection.autoCommit).isFalse();
    }

    @Test
    void providerDisablesAutocommit_withAutocommitOn_isAContradiction() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.provider_disables_autocommit", "true");
        settings.put("hibernate.connection.autocommit", "true");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.connection.provider_disables_autocommit")
                .hasMessageContaining("hibernate.connection.autocommit");
    }

    @Test
    void driverClass_andDriverProperties_goToEveryPool() {
        final Map<String, Object> settings = base();
        settings.put("jakarta.persistence.jdbc.driver", "org.postgresql.Driver");
        settings.put("hibernate.connection.ApplicationName", "shop");
        settings.put("hibernate.connection.sslmode", "disable");
        settings.put("hibernate.connection.login_timeout", "7");
        settings.put("hibernate.connection.url", PRIMARY);
        settings.put("hibernate.connection.password", "s3cret-pw");
        settings.put("hibernate.connection.handling_mode", "DELAYED_ACQUISITION_AND_RELEASE_AFTER_TRANSACTION");
        final RoutingConfig config = config(settings);
        for (HikariConfig pool : List.of(OwnPools.primary(config), OwnPools.replica(config, 0))) {
            assertThat(pool.getDriverClassName()).isEqualTo("org.postgresql.Driver");
            assertThat(pool.getDataSourceProperties())
                    .as("unknown hibernate.connection.* keys are driver properties, Hibernate's own are not")
                    .containsOnly(
                            Map.entry("ApplicationName", "shop"),
                            Map.entry("sslmode", "disable"),
                            Map.entry("loginTimeout", "7"));
        }
    }

    @Test
    void driverClassThatIsNotThere_failsNamingTheKey() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.driver_class", "com.example.NoSuchDriver");
        final RoutingConfig config = config(settings);
        assertThatThrownBy(() -> OwnPools.primary(config))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.connection.driver_class")
                .hasMessageContaining("com.example.NoSuchDriver");
    }

    @Test
    void poolSizes_hibernateAndHikariKeysAreDefaults_routingKeysWin() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.pool_size", "7");
        settings.put("hibernate.connection.min_pool_size", "2");
        RoutingConfig config = config(settings);
        assertThat(config.primaryPool.maximumPoolSize()).isEqualTo(7);
        assertThat(config.replicaPool.maximumPoolSize()).isEqualTo(7);
        assertThat(config.replicaPool.minimumIdle()).isEqualTo(2);
        settings.put("hibernate.hikari.maximumPoolSize", "6");
        settings.put("hibernate.hikari.connectionTimeout", "20000");
        config = config(settings);
        assertThat(config.primaryPool.maximumPoolSize()).isEqualTo(6);
        assertThat(config.primaryPool.connectionTimeout()).isEqualTo(Duration.ofSeconds(20));
        assertThat(config.replicaPool.connectionTimeout())
                .as("replicas keep their short timeout: a slow replica must fail over")
                .isEqualTo(Duration.ofSeconds(1));
        settings.put(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "3");
        config = config(settings);
        assertThat(config.primaryPool.maximumPoolSize()).isEqualTo(6);
        assertThat(config.replicaPool.maximumPoolSize()).isEqualTo(3);
    }

    @Test
    void poolSizesThatContradict_nameTheKeyTheyCameFrom() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.hikari.minimumIdle", "20");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.hikari.minimumIdle");
    }

    @Test
    void hikariSettings_goToEveryPool_exceptWhatEachPoolNeedsItself() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.hikari.maxLifetime", "600000");
        settings.put("hibernate.hikari.leakDetectionThreshold", "5000");
        settings.put("hibernate.hikari.dataSource.tcpKeepAlive", "true");
        settings.put("hibernate.hikari.poolName", "shop");
        settings.put("hibernate.hikari.connectionInitSql", "SET application_name = 'shop'");
        settings.put("hibernate.hikari.initializationFailTimeout", "5");
        final RoutingConfig config = config(settings);
        final HikariConfig primary = OwnPools.primary(config);
        final HikariConfig replica = OwnPools.replica(config, 0);
        for (HikariConfig pool : List.of(primary, replica)) {
            assertThat(pool.getMaxLifetime()).isEqualTo(600_000);
            assertThat(pool.getLeakDetectionThreshold()).isEqualTo(5_000);
            assertThat(pool.getDataSourceProperties()).containsEntry("tcpKeepAlive", "true");
        }
        assertThat(primary.getPoolName()).isEqualTo("shop-primary");
        assertThat(replica.getPoolName()).isEqualTo("shop-replica1");
        assertThat(primary.getConnectionInitSql()).isEqualTo("SET application_name = 'shop'");
        assertThat(replica.getConnectionInitSql())
                .isEqualTo(JdbcRouting.READ_ONLY_SESSION + "; SET application_name = 'shop'");
        assertThat(primary.getInitializationFailTimeout()).isEqualTo(5);
        assertThat(replica.getInitializationFailTimeout())
                .as("a replica that is down at startup must not stop the application")
                .isEqualTo(-1);
        assertThat(replica.isReadOnly()).isTrue();
        assertThat(primary.isReadOnly()).isFalse();
    }

    @ParameterizedTest
    @CsvSource({
        "hikari",
        "HikariCP",
        "org.hibernate.hikaricp.internal.HikariCPConnectionProvider",
        "com.zaxxer.hikari.hibernate.HikariConnectionProvider"
    })
    void providerClass_hikariCP_isAccepted(String provider) {
        final Map<String, Object> settings = base();
        settings.put("hibernate.connection.provider_class", provider);
        assertThat(config(settings).routingEnabled()).isTrue();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "hibernate.connection.provider_class | agroal | hibernate.hikari.*",
                "hibernate.connection.provider_class | org.hibernate.engine.jdbc.connections.internal.DriverManagerConnectionProvider | hibernate.hikari.*",
                "hibernate.connection.initial_pool_size | 3 | hibernate.routing.primary.minimum_idle",
                "hibernate.connection.pool_validation_interval | 30 | hibernate.hikari.keepaliveTime",
                "hibernate.connection.creator_factory_class | com.example.Factory | remove it",
                "hibernate.c3p0.max_size | 20 | hibernate.hikari.*",
                "hibernate.agroal.maxSize | 20 | hibernate.hikari.*",
                "hibernate.hikari.jdbcUrl | jdbc:postgresql://elsewhere/app | jakarta.persistence.jdbc.url",
                "hibernate.hikari.dataSourceClassName | org.postgresql.ds.PGSimpleDataSource | jakarta.persistence.jdbc.url",
                "hibernate.hikari.username | other | jakarta.persistence.jdbc.user",
                "hibernate.hikari.readOnly | true | Connection.setReadOnly(true)",
                "hibernate.hikari.maximumPoolSizes | 3 | HikariConfig",
                "hibernate.hikari.maxLifetime | forever | HikariConfig"
            })
    void connectionSettingsWithoutAMeaningForTheLibrarysPools_failNamingTheKeyAndWhatToUse(
            String key, String value, String instead) {
        final Map<String, Object> settings = base();
        settings.put(key, value);
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining(key)
                .hasMessageContaining(instead)
                .extracting(e -> ((RoutingConfigurationException) e).getKey())
                .isEqualTo(key);
    }
}
