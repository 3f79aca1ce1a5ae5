package io.github.hibernaterouting.routing.internal.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import java.util.HashMap;
import java.util.Map;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.cfg.MultiTenancySettings;
import org.junit.jupiter.api.Test;

/** What the bootstrap refuses before Hibernate builds anything, and what it lets pass. */
class RoutingServiceContributorTest {
    private static final String PRIMARY = "jdbc:postgresql://127.0.0.1:5432/app";
    private static final String REPLICA = "jdbc:postgresql://127.0.0.1:5433/app";

    private static StandardServiceRegistryBuilder contribute(Map<String, Object> settings) {
        final StandardServiceRegistryBuilder builder = new StandardServiceRegistryBuilder().applySettings(settings);
        new RoutingServiceContributor().contribute(builder);
        return builder;
    }

    private static Map<String, Object> primaryOnly() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("jakarta.persistence.jdbc.url", PRIMARY);
        return settings;
    }

    @Test
    void misspelledReplicaUrls_failsTheBootstrapNamingTheKeyAndTheClosestKnownKey_insteadOfSwitchingRoutingOff() {
        final Map<String, Object> settings = primaryOnly();
        settings.put("hibernate.routing.replica_url", REPLICA);
        assertThatThrownBy(() -> contribute(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("'hibernate.routing.replica_url'")
                .hasMessageContaining("'" + RoutingSettings.REPLICA_URLS + "'");
    }

    @Test
    void misspelledKey_besideWorkingRouting_failsNamingTheClosestKnownKey() {
        final Map<String, Object> settings = primaryOnly();
        settings.put(RoutingSettings.REPLICA_URLS, REPLICA);
        settings.put("hibernate.routing.max_replica_lag_byte", "1MB");
        assertThatThrownBy(() -> contribute(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("'hibernate.routing.max_replica_lag_byte'")
                .hasMessageContaining("'" + RoutingSettings.MAX_REPLICA_LAG_BYTES + "'");
        settings.remove("hibernate.routing.max_replica_lag_byte");
        settings.put("hibernate.routing.primary.maximumPoolSize", "3");
        assertThatThrownBy(() -> contribute(settings))
                .hasMessageContaining("'" + RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE + "'");
    }

    @Test
    void everyKnownKey_andNoRoutingKeyAtAll_pass() throws Exception {
        final Map<String, Object> settings = primaryOnly();
        assertThat(contribute(settings).getSettings())
                .doesNotContainKey(MultiTenancySettings.MULTI_TENANT_CONNECTION_PROVIDER);
        settings.put(RoutingSettings.REPLICA_URLS, REPLICA);
        settings.put(RoutingSettings.STRATEGY, "STALE_READ");
        settings.put(RoutingSettings.ACTOR_STAMPS_TABLE, "users");
        assertThat(contribute(settings).getSettings())
                .containsKey(MultiTenancySettings.MULTI_TENANT_CONNECTION_PROVIDER);
    }

    @Test
    void knownKeys_areEveryConstantOfTheFourSettingsInterfaces_dataSourceAndPoolKeysIncluded() {
        assertThat(SettingKeys.KNOWN)
                .contains(
                        RoutingSettings.REPLICA_DATASOURCES,
                        RoutingSettings.ACTOR_STAMPS_MEMORY_TTL,
                        RoutingSettings.PRIMARY_MAX_LIFETIME,
                        RoutingSettings.REPLICA_VALIDATION_TIMEOUT,
                        RoutingSettings.METER_REGISTRY)
                .allMatch(key -> key.startsWith(RoutingSettings.PREFIX))
                .doesNotContain(RoutingSettings.PREFIX);
        final Map<String, Object> settings = new HashMap<>();
        settings.put("hibernate.routing.replica_datasource", "java:comp/env/jdbc/replica1");
        assertThatThrownBy(() -> contribute(settings))
                .hasMessageContaining("'" + RoutingSettings.REPLICA_DATASOURCES + "'");
    }

    @Test
    void jvmSystemProperty_withTheRoutingPrefix_isNotTheApplicationsSetting() {
        // Hibernate copies every system property into the settings; tools use the prefix for their own.
        System.setProperty("hibernate.routing.some_tool.option", "x");
        try {
            final Map<String, Object> settings = primaryOnly();
            settings.put(RoutingSettings.REPLICA_URLS, REPLICA);
            settings.put("hibernate.routing.some_tool.option", "x");
            assertThat(contribute(settings).getSettings())
                    .containsKey(MultiTenancySettings.MULTI_TENANT_CONNECTION_PROVIDER);
        } finally {
            System.clearProperty("hibernate.routing.some_tool.option");
        }
    }
}
