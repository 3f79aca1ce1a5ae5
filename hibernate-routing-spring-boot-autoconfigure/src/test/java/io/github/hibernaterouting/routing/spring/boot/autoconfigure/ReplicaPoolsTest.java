package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** The replica pools built from properties; no server is needed, since a replica pool does not connect at start. */
class ReplicaPoolsTest {
    private static HibernateRoutingProperties bind(Map<String, String> properties) {
        return new Binder(new MapConfigurationPropertySource(properties))
                .bind("hibernate.routing", HibernateRoutingProperties.class)
                .orElseGet(HibernateRoutingProperties::new);
    }

    private static HikariDataSource pool(RoutingReplicaDataSources replicas, int index) {
        return (HikariDataSource) replicas.dataSources().get(index);
    }

    @Test
    void replicaUrls_getPoolsWithTheStartersReplicaDefaults_andThePrimarysCredentials() {
        try (RoutingReplicaDataSources replicas = ReplicaPools.build(
                bind(Map.of("hibernate.routing.replica_urls", "jdbc:postgresql://r1/app, jdbc:postgresql://r2/app")),
                name -> null,
                "app",
                "secret",
                null)) {
            assertThat(replicas.dataSources()).hasSize(2);
            final HikariDataSource first = pool(replicas, 0);
            assertThat(first.getJdbcUrl()).isEqualTo("jdbc:postgresql://r1/app");
            assertThat(first.getUsername()).isEqualTo("app");
            assertThat(first.getPassword()).isEqualTo("secret");
            assertThat(first.getPoolName()).isEqualTo("hibernate-routing-replica1");
            assertThat(first.getConnectionTimeout()).isEqualTo(1_000);
            assertThat(first.isReadOnly()).isTrue();
            assertThat(pool(replicas, 1).getPoolName()).isEqualTo("hibernate-routing-replica2");
        }
    }

    @Test
    void replicasInSpringDatasourceStyle_keepTheirOwnSettings() {
        try (RoutingReplicaDataSources replicas = ReplicaPools.build(
                bind(Map.of(
                        "hibernate.routing.replicas[0].url", "jdbc:postgresql://r1/app",
                        "hibernate.routing.replicas[0].username", "reader",
                        "hibernate.routing.replicas[0].password", "reader-secret",
                        "hibernate.routing.replicas[0].hikari.maximum-pool-size", "4",
                        "hibernate.routing.replicas[0].hikari.connection-timeout", "2000",
                        "hibernate.routing.replicas[0].hikari.pool-name", "reports")),
                name -> null,
                "app",
                "secret",
                null)) {
            final HikariDataSource pool = pool(replicas, 0);
            assertThat(pool.getUsername()).isEqualTo("reader");
            assertThat(pool.getPassword()).isEqualTo("reader-secret");
            assertThat(pool.getMaximumPoolSize()).isEqualTo(4);
            assertThat(pool.getConnectionTimeout()).isEqualTo(2_000);
            assertThat(pool.getPoolName()).isEqualTo("reports");
        }
    }

    @Test
    void aReplicaUrlWithUserInfo_isRefusedBeforeHikariCpSeesIt_namingTheProperty_withThePasswordMasked() {
        for (Map<String, String> properties : List.of(
                Map.of("hibernate.routing.replica_urls", "jdbc:postgresql://shop:s3cret-pw@127.0.0.1:5432/shop"),
                Map.of("hibernate.routing.replicas[0].url", "jdbc:postgresql://shop:s3cret-pw@127.0.0.1:5432/shop"))) {
            assertThatThrownBy(() -> ReplicaPools.build(bind(properties), name -> null, "app", "secret", null))
                    .isInstanceOf(RoutingConfigurationException.class)
                    .hasMessageContaining(properties.keySet().iterator().next())
                    .hasMessageContaining("without user-info")
                    .hasMessageNotContaining("s3cret-pw");
        }
        assertThatThrownBy(() -> ReplicaPools.build(
                        bind(Map.of()),
                        Map.of("HIBERNATE_ROUTING_REPLICA_URLS", "jdbc:postgresql://shop:s3cret-pw@r1/shop")::get,
                        "app",
                        "secret",
                        null))
                .hasMessageContaining("HIBERNATE_ROUTING_REPLICA_URLS")
                .hasMessageNotContaining("s3cret-pw");
    }

    @Test
    void aMalformedReplicaUrl_isRefusedNamingThePropertyAndTheExpectedPrefix() {
        assertThatThrownBy(() -> ReplicaPools.build(
                        bind(Map.of("hibernate.routing.replicas[0].url", "jdbc:postgressql://r1/app")),
                        name -> null,
                        "app",
                        "secret",
                        null))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.routing.replicas[0].url")
                .hasMessageContaining("jdbc:postgresql:");
    }

    @Test
    void theLibrarysEnvironmentVariables_areTheFallback() {
        final Map<String, String> environment = Map.of(
                "HIBERNATE_ROUTING_REPLICA_URLS", "jdbc:postgresql://r1/app",
                "HIBERNATE_ROUTING_REPLICA_USER", "reader");
        try (RoutingReplicaDataSources replicas =
                ReplicaPools.build(bind(Map.of()), environment::get, "app", "secret", null)) {
            assertThat(replicas.dataSources()).hasSize(1);
            assertThat(pool(replicas, 0).getUsername()).isEqualTo("reader");
        }
    }

    @Test
    void noReplicas_noPools() {
        try (RoutingReplicaDataSources replicas = ReplicaPools.build(bind(Map.of()), name -> null, "app", "s", null)) {
            assertThat(replicas.isEmpty()).isTrue();
            assertThat(replicas.dataSources()).isEqualTo(List.of());
        }
    }

    @Test
    void replicasGivenTwice_failNamingBothProperties() {
        assertThatThrownBy(() -> ReplicaPools.build(
                        bind(Map.of(
                                "hibernate.routing.replica_urls", "jdbc:postgresql://r1/app",
                                "hibernate.routing.replicas[0].url", "jdbc:postgresql://r2/app")),
                        name -> null,
                        "app",
                        "secret",
                        null))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("hibernate.routing.replica_urls")
                .hasMessageContaining("hibernate.routing.replicas[n].url");
    }
}
