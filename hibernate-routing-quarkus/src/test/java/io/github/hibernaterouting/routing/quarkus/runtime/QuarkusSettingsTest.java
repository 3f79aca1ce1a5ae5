package io.github.hibernaterouting.routing.quarkus.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class QuarkusSettingsTest {
    @Test
    void librarySettings_areAcceptedWithDashesUnderscoresOrDots_andKeyedAsTheLibraryKnowsThem() {
        final Map<String, Object> settings = QuarkusSettings.from(config(Map.of(
                "max-replica-lag", "2s",
                "actor_stamps", "TABLE",
                "circuit-breaker.failure-threshold", "3",
                "replica.maximum-pool-size", "4")));

        assertThat(settings)
                .containsEntry(RoutingSettings.MAX_REPLICA_LAG, "2s")
                .containsEntry(RoutingSettings.ACTOR_STAMPS, "TABLE")
                .containsEntry("hibernate.routing.circuit_breaker.failure_threshold", "3")
                .containsEntry("hibernate.routing.replica.maximum_pool_size", "4")
                .containsEntry(RoutingSettings.TRANSACTIONS, "PRIMARY");
    }

    @Test
    void anUnknownSetting_failsNamingItsKeyAndTheClosestOne_withoutItsValue() {
        assertThatThrownBy(() -> QuarkusSettings.from(config(Map.of("max-replica-lagg", "s3cr3t"))))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("quarkus.hibernate-routing.settings.max-replica-lagg")
                .hasMessageContaining("did you mean 'quarkus.hibernate-routing.settings.max_replica_lag'")
                .hasMessageNotContaining("s3cr3t");
    }

    @Test
    void aSettingWithAPropertyOfItsOwn_namesThatProperty_withoutItsValue() {
        assertThatThrownBy(() -> QuarkusSettings.from(config(Map.of("replica_password", "s3cr3t"))))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("quarkus.hibernate-routing.settings.replica_password")
                .hasMessageContaining("quarkus.hibernate-routing.replica-password")
                .hasMessageNotContaining("s3cr3t");
        assertThatThrownBy(() -> QuarkusSettings.from(config(Map.of("meter_registry", "x"))))
                .hasMessageContaining("quarkus-micrometer");
    }

    @Test
    void aPrimaryPoolSetting_isRefused_sinceThePrimaryIsTheDefaultDatasource() {
        assertThatThrownBy(() -> QuarkusSettings.from(config(Map.of("primary.maximum-pool-size", "4"))))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("quarkus.hibernate-routing.settings.primary.maximum-pool-size")
                .hasMessageContaining("quarkus.datasource.jdbc");
    }

    @Test
    void theTransactionModeAndRedis_comeFromTheirOwnProperties() {
        final Map<String, Object> settings = QuarkusSettings.from(new Config(Map.of(), "LAZY", "redis://127.0.0.1:1"));

        assertThat(settings)
                .containsEntry(RoutingSettings.TRANSACTIONS, "LAZY")
                .containsEntry(RoutingSettings.REDIS_URI, "redis://127.0.0.1:1");
    }

    private static HibernateRoutingConfig config(Map<String, String> settings) {
        return new Config(settings, "PRIMARY", null);
    }

    private record Config(Map<String, String> settings, String transactions, String redis)
            implements HibernateRoutingConfig {
        @Override
        public Optional<List<String>> replicaDatasources() {
            return Optional.empty();
        }

        @Override
        public Optional<List<String>> replicaUrls() {
            return Optional.empty();
        }

        @Override
        public Optional<String> replicaUsername() {
            return Optional.empty();
        }

        @Override
        public Optional<String> replicaPassword() {
            return Optional.empty();
        }

        @Override
        public Optional<String> redisUri() {
            return Optional.ofNullable(redis);
        }

        @Override
        public Web web() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Health health() {
            throw new UnsupportedOperationException();
        }
    }
}
