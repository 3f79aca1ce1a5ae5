package io.github.hibernaterouting.routing.internal.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import java.time.Duration;
import java.util.HashMap;
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
        settings.put(RoutingSettings.REPLICA_URLS, "jdbc:postgresql://u:s3cret-pw@127.0.0.1:5433/app");
        assertThat(config(settings).toString()).doesNotContain("s3cret-pw").contains("****");
    }
}
