package io.github.hibernaterouting.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
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
    void toString_showsNoCredentialOfAnyUrl() {
        final Servers servers = Servers.fromEnvironment(Map.of(
                "SAMPLE_PRIMARY_URL", "jdbc:postgresql://db:5432/app?sslpassword=s3cr3t&apiKey=k3y",
                "HIBERNATE_ROUTING_REPLICA_URLS", "jdbc:postgresql://db:5433/app?authToken=t0k3n;client_secret=s3cr3t",
                "SAMPLE_DB_USER", "app",
                "HIBERNATE_ROUTING_REDIS_URI", "redis://cache-user:r3dis@cache:6379"));
        assertThat(servers.toString())
                .contains("db:5432", "db:5433", "cache:6379")
                .doesNotContain("s3cr3t", "k3y", "t0k3n", "r3dis");
    }

    @Test
    void notAPostgresqlUrl_failsWithoutItsCredentials() {
        assertThatThrownBy(() -> NodeNames.fromUrls(
                        "jdbc:postgresql://db:5432/app",
                        List.of("jdbc:postgresql://app:u1nfo-pw@db:x/app?sslpassword=s3cr3t&apiKey=k3y")))
                .hasMessageContaining("Not a PostgreSQL JDBC URL")
                .message()
                .doesNotContain("u1nfo-pw", "s3cr3t", "k3y");
    }

    @Test
    void fromEnvironment_primaryWithoutUser_failsNamingTheVariable() {
        assertThatIllegalStateException()
                .isThrownBy(
                        () -> Servers.fromEnvironment(Map.of("SAMPLE_PRIMARY_URL", "jdbc:postgresql://db:5432/app")))
                .withMessageContaining("SAMPLE_DB_USER");
    }
}
