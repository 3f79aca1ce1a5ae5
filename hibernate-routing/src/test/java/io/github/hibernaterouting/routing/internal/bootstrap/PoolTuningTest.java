package io.github.hibernaterouting.routing.internal.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The lifetimes and timeouts of the library's own pools, per kind, and the registry their meters go to. */
class PoolTuningTest {
    private static Map<String, Object> base() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("jakarta.persistence.jdbc.url", "jdbc:postgresql://127.0.0.1:5432/app");
        settings.put(RoutingSettings.REPLICA_URLS, "jdbc:postgresql://127.0.0.1:5433/app");
        return settings;
    }

    private static RoutingConfig config(Map<String, Object> settings) {
        return RoutingConfig.from(settings, name -> null);
    }

    @Test
    void eachKindOfPool_getsItsOwnLifetimesAndTimeouts_overHibernateHikariSettings() {
        final Map<String, Object> settings = base();
        settings.put("hibernate.hikari.maxLifetime", "600000");
        settings.put("hibernate.hikari.idleTimeout", "120000");
        settings.put(RoutingSettings.PRIMARY_MAX_LIFETIME, "20m");
        settings.put(RoutingSettings.PRIMARY_KEEPALIVE_TIME, "45s");
        settings.put(RoutingSettings.PRIMARY_LEAK_DETECTION_THRESHOLD, "10s");
        settings.put(RoutingSettings.PRIMARY_VALIDATION_TIMEOUT, "2s");
        settings.put(RoutingSettings.REPLICA_IDLE_TIMEOUT, "0");
        settings.put(RoutingSettings.REPLICA_VALIDATION_TIMEOUT, "500ms");
        final RoutingConfig config = config(settings);
        final HikariConfig primary = OwnPools.primary(config);
        assertThat(primary.getMaxLifetime()).isEqualTo(1_200_000);
        assertThat(primary.getKeepaliveTime()).isEqualTo(45_000);
        assertThat(primary.getLeakDetectionThreshold()).isEqualTo(10_000);
        assertThat(primary.getValidationTimeout()).isEqualTo(2_000);
        assertThat(primary.getIdleTimeout()).as("hibernate.hikari.idleTimeout").isEqualTo(120_000);
        final HikariConfig replica = OwnPools.replica(config, 0);
        assertThat(replica.getMaxLifetime()).as("hibernate.hikari.maxLifetime").isEqualTo(600_000);
        assertThat(replica.getIdleTimeout()).isZero();
        assertThat(replica.getValidationTimeout()).isEqualTo(500);
        assertThat(replica.getKeepaliveTime()).as("HikariCP's default").isEqualTo(120_000);
        assertThat(replica.getLeakDetectionThreshold()).isZero();
    }

    @Test
    void valuesHikariCpWouldSilentlyReplace_failNamingTheKeyAndTheBounds() {
        final Map<String, String> bad = Map.of(
                RoutingSettings.PRIMARY_MAX_LIFETIME, "10s",
                RoutingSettings.REPLICA_KEEPALIVE_TIME, "5s",
                RoutingSettings.PRIMARY_IDLE_TIMEOUT, "31m",
                RoutingSettings.REPLICA_LEAK_DETECTION_THRESHOLD, "1s",
                RoutingSettings.REPLICA_VALIDATION_TIMEOUT, "1s",
                RoutingSettings.PRIMARY_VALIDATION_TIMEOUT, "100ms");
        bad.forEach((key, value) -> {
            final Map<String, Object> settings = base();
            settings.put(key, value);
            assertThatThrownBy(() -> config(settings))
                    .as(key)
                    .isInstanceOf(RoutingConfigurationException.class)
                    .hasMessageContaining("'" + key + "'")
                    .hasMessageContaining(value);
        });
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.REPLICA_VALIDATION_TIMEOUT, "1s");
        assertThatThrownBy(() -> config(settings)).hasMessageContaining(RoutingSettings.REPLICA_CONNECTION_TIMEOUT);
        settings.put(RoutingSettings.REPLICA_CONNECTION_TIMEOUT, "3s");
        assertThat(config(settings).replicaPool.tuning().validationTimeout()).hasSeconds(1);
    }

    @Test
    void replicaValidationTimeoutByDefault_adaptsToTheShortestReplicaConnectionTimeout() {
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.REPLICA_CONNECTION_TIMEOUT, "250ms");
        assertThat(config(settings).replicaPool.tuning().validationTimeout()).hasMillis(250);
        settings.put(RoutingSettings.REPLICA_CONNECTION_TIMEOUT, "400ms");
        assertThat(config(settings).replicaPool.tuning().validationTimeout()).hasMillis(250);
        settings.put(RoutingSettings.REPLICA_CONNECTION_TIMEOUT, "1s");
        assertThat(config(settings).replicaPool.tuning().validationTimeout()).hasMillis(500);
    }

    @Test
    void poolMeters_goToTheConfiguredRegistry_elseTheGlobalOne_unlessHikariSettingsNameOne() {
        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
        final Map<String, Object> settings = base();
        settings.put(RoutingSettings.METER_REGISTRY, registry);
        assertThat(OwnPools.primary(config(settings)).getMetricRegistry()).isSameAs(registry);
        assertThat(OwnPools.replica(config(settings), 0).getMetricRegistry()).isSameAs(registry);
        assertThat(OwnPools.primary(config(base())).getMetricRegistry()).isSameAs(Metrics.globalRegistry);
    }

    @Test
    void newPoolSettings_areRefused_whenTheLibraryBuildsNoSuchPool() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("hibernate.connection.datasource", "java:comp/env/jdbc/primary");
        settings.put(RoutingSettings.REPLICA_DATASOURCES, "java:comp/env/jdbc/replica1");
        settings.put(RoutingSettings.REPLICA_MAX_LIFETIME, "20m");
        assertThatThrownBy(() -> config(settings))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("'" + RoutingSettings.REPLICA_MAX_LIFETIME + "' has no effect");
        settings.remove(RoutingSettings.REPLICA_MAX_LIFETIME);
        settings.put(RoutingSettings.PRIMARY_LEAK_DETECTION_THRESHOLD, "10s");
        assertThatThrownBy(() -> config(settings))
                .hasMessageContaining("'" + RoutingSettings.PRIMARY_LEAK_DETECTION_THRESHOLD + "' has no effect");
        settings.remove(RoutingSettings.PRIMARY_LEAK_DETECTION_THRESHOLD);
        assertThat(config(settings).primaryDataSource).isNotInstanceOf(DataSource.class);
    }
}
