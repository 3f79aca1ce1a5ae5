package io.github.hibernaterouting.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ServersTest {
    @Test
    void fromEnvironment_withoutPrimary_isNull() {
        assertThat(Servers.fromEnvironment(Map.of("HIBERNATE_ROUTING_REPLICA_URLS", "jdbc:postgresql://db:5433/app")))
                .isNull();
    }

    @Test
    void fromEnvironment_readsEveryVariable_andToStringHidesThePassword() {
        final Servers servers = Servers.fromEnvironment(Map.of(
                "SAMPLE_PRIMARY_URL", "jdbc:postgresql://db:5432/app",
                "HIBERNATE_ROUTING_REPLICA_URLS", " jdbc:postgresql://db:5433/app , jdbc:postgresql://db:5434/app ",
                "SAMPLE_DB_USER", "app",
                "SAMPLE_DB_PASSWORD", "s3cret",
                "HIBERNATE_ROUTING_REDIS_URI", "redis://:redispass@cache:6379"));
        assertThat(servers.replicaUrls())
                .containsExactly("jdbc:postgresql://db:5433/app", "jdbc:postgresql://db:5434/app");
        assertThat(servers.user()).isEqualTo("app");
        assertThat(servers.password()).isEqualTo("s3cret");
        assertThat(servers.nodeNames().nameOf(5434)).isEqualTo("replica2");
        assertThat(servers.toString())
                .doesNotContain("s3cret")
                .doesNotContain("redispass")
                .contains("db:5433");
    }

    @Test
    void fromEnvironment_primaryWithoutUser_failsNamingTheVariable() {
        assertThatIllegalStateException()
                .isThrownBy(
                        () -> Servers.fromEnvironment(Map.of("SAMPLE_PRIMARY_URL", "jdbc:postgresql://db:5432/app")))
                .withMessageContaining("SAMPLE_DB_USER");
    }
}
