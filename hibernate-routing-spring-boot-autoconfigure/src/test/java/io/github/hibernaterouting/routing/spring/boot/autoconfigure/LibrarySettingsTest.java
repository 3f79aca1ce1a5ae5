package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

class LibrarySettingsTest {
    @Test
    void librarySettings_arePassedWithTheLibrarysKeys_whateverRelaxedFormTheyAreWrittenIn() {
        final MockEnvironment environment = new MockEnvironment()
                .withProperty("hibernate.routing.strategy", "STALE_READ")
                .withProperty("hibernate.routing.max-replica-lag", "5s")
                .withProperty("hibernate.routing.actor_stamps", "TABLE")
                .withProperty("hibernate.routing.actor_stamps.table", "accounts")
                .withProperty("hibernate.routing.circuit-breaker.failure-threshold", "3");

        assertThat(LibrarySettings.from(environment))
                .isEqualTo(Map.of(
                        RoutingSettings.STRATEGY, "STALE_READ",
                        RoutingSettings.MAX_REPLICA_LAG, "5s",
                        RoutingSettings.ACTOR_STAMPS, "TABLE",
                        RoutingSettings.ACTOR_STAMPS_TABLE, "accounts",
                        RoutingSettings.CIRCUIT_BREAKER_FAILURE_THRESHOLD, "3"));
    }

    @Test
    void theStartersOwnProperties_areNotPassed() {
        final MockEnvironment environment = new MockEnvironment()
                .withProperty("hibernate.routing.replica_urls", "jdbc:postgresql://r1/app")
                .withProperty("hibernate.routing.replica-user", "reader")
                .withProperty("hibernate.routing.replica_password", "secret")
                .withProperty("hibernate.routing.replicas[0].url", "jdbc:postgresql://r2/app")
                .withProperty("hibernate.routing.replicas[0].hikari.maximum-pool-size", "4")
                .withProperty("hibernate.routing.web.enabled", "false");

        assertThat(LibrarySettings.from(environment)).isEmpty();
    }

    @Test
    void aMisspeltKey_failsNamingIt_withoutItsValue() {
        final MockEnvironment environment =
                new MockEnvironment().withProperty("hibernate.routing.replica_pasword", "s3cret");

        assertThatThrownBy(() -> LibrarySettings.from(environment))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.routing.replica_pasword")
                .hasMessageContaining("Unknown setting")
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void aMisspeltKey_namesTheSettingItIsClosestTo() {
        final MockEnvironment environment = new MockEnvironment().withProperty("hibernate.routing.stratgy", "PRIMARY");

        assertThatThrownBy(() -> LibrarySettings.from(environment))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageStartingWith("Unknown setting 'hibernate.routing.stratgy'")
                .hasMessageContaining("did you mean 'hibernate.routing.strategy'?");
    }

    @Test
    void aPoolSetting_failsNamingWhereToSizeThePools() {
        final MockEnvironment environment =
                new MockEnvironment().withProperty("hibernate.routing.replica.maximum_pool_size", "4");

        assertThatThrownBy(() -> LibrarySettings.from(environment))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.routing.replica.maximum_pool_size")
                .hasMessageContaining("hibernate.routing.replicas[n].hikari.*")
                .hasMessageContaining("spring.datasource.hikari.*");
    }

    @Test
    void replicaDataSources_areTheStarters() {
        final MockEnvironment environment =
                new MockEnvironment().withProperty("hibernate.routing.replica_datasources", "java:comp/env/jdbc/r1");

        assertThatThrownBy(() -> LibrarySettings.from(environment))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.routing.replica_datasources")
                .hasMessageContaining("the starter sets it");
    }
}
