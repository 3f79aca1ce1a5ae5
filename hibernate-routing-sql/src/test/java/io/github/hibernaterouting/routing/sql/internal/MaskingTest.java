package io.github.hibernaterouting.routing.sql.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MaskingTest {
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "jdbc:postgresql://h:5432/db?user=a&password=pw&ssl=true | jdbc:postgresql://h:5432/db?user=a&password=****&ssl=true",
                "jdbc:postgresql://h/db?password=pw | jdbc:postgresql://h/db?password=****",
                "jdbc:postgresql://user:pw@h:5432/db | jdbc:postgresql://user:****@h:5432/db",
                "jdbc:postgresql://h/db?PASSWORD=pw;ssl=1 | jdbc:postgresql://h/db?PASSWORD=****;ssl=1",
                "jdbc:postgresql://h:5432/db | jdbc:postgresql://h:5432/db",
                "jdbc:postgresql://h/db?password= | jdbc:postgresql://h/db?password=",
            })
    void url_masksPasswords(String url, String masked) {
        assertThat(Masking.url(url)).isEqualTo(masked);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "jdbc:postgresql://h/db?sslpassword=s3cr3t&ssl=true | jdbc:postgresql://h/db?sslpassword=****&ssl=true",
                "jdbc:postgresql://h/db?mypassword=x | jdbc:postgresql://h/db?mypassword=****",
                "jdbc:postgresql://h/db?apiKey=k3y | jdbc:postgresql://h/db?apiKey=****",
                "jdbc:postgresql://h/db?authToken=t0k3n&x=1 | jdbc:postgresql://h/db?authToken=****&x=1",
                "jdbc:postgresql://h/db?SSLKEY=/k.pk8&a=b | jdbc:postgresql://h/db?SSLKEY=****&a=b",
                "jdbc:sqlserver://h;user=a;client_secret=s3cr3t;db=x | jdbc:sqlserver://h;user=a;client_secret=****;db=x",
                "jdbc:postgresql://h/db?a=1&auth.token=t;b=2 | jdbc:postgresql://h/db?a=1&auth.token=****;b=2",
                "jdbc:postgresql://h/db?keepalive=true&options=-c%20x | jdbc:postgresql://h/db?keepalive=true&options=-c%20x",
            })
    void url_masksEveryParameterNamedForASecret_inQueryStringsAndSemicolonForms(String url, String masked) {
        assertThat(Masking.url(url)).isEqualTo(masked);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "redis://:r3dis@cache:6379/0 | redis://:****@cache:6379/0",
                "redis://r3dis@cache:6379 | redis://****@cache:6379",
                "redis://cache-user:r3dis@cache:6379 | redis://cache-user:****@cache:6379",
                "rediss://u:p@ss@cache | rediss://u:****@cache",
                "redis-sentinel://pw@s1:26379,s2:26379/?sentinelMasterId=m | redis-sentinel://****@s1:26379,s2:26379/?sentinelMasterId=m",
                "jdbc:postgresql://h/db?next=a@b | jdbc:postgresql://h/db?next=a@b",
            })
    void url_masksTheUserInfoPassword_orAllOfAUserInfoWithoutAColon(String url, String masked) {
        assertThat(Masking.url(url)).isEqualTo(masked);
    }

    @Test
    void text_masksEveryUrlAndListInAMessage() {
        final Properties properties = new Properties();
        properties.setProperty("sslpassword", "s3cr3t");
        assertThat(Masking.text("Failed to get driver instance for jdbcUrl=jdbc:postgresql://u:pw@h/db?apiKey=k3y "
                        + "(also redis://:r3dis@cache) with " + properties))
                .doesNotContain("pw@", "k3y", "r3dis", "s3cr3t")
                .contains("jdbc:postgresql://u:****@h/db?apiKey=****", "redis://:****@cache", "{sslpassword=****}");
        assertThat(Masking.text(null)).isNull();
    }

    @Test
    void property_masksTheValueOfASecretName_andTheUrlsOfAnyOther() {
        assertThat(Masking.property("hibernate.hikari.dataSource.sslpassword", "s3cr3t"))
                .isEqualTo("****");
        assertThat(Masking.property("hibernate.connection.api_key", "k3y")).isEqualTo("****");
        assertThat(Masking.property("jakarta.persistence.jdbc.url", "jdbc:postgresql://h/db?password=pw"))
                .isEqualTo("jdbc:postgresql://h/db?password=****");
        assertThat(Masking.property("hibernate.routing.strategy", "FAST")).isEqualTo("FAST");
    }

    @Test
    void hasUserInfo_findsItInAnyUrl() {
        assertThat(Masking.hasUserInfo("jdbc:postgresql://u:pw@h/db")).isTrue();
        assertThat(Masking.hasUserInfo("jdbc:postgresql://h/db?x=a@b")).isFalse();
        assertThat(Masking.hasUserInfo("jdbc:postgresql://h:5432/db")).isFalse();
    }

    @Test
    void exception_masksEveryMessageOfTheChain_andKeepsOneWithoutSecrets() {
        final RuntimeException plain = new IllegalStateException("no secret", new SQLException("refused"));
        assertThat(Masking.exception(plain)).isSameAs(plain);
        final RuntimeException leaky = new RuntimeException(
                "Failed to get driver instance for jdbcUrl=jdbc:postgresql://h/db?apiKey=k3y",
                new SQLException("No suitable driver for jdbc:postgresql://u:pw@h/db"));
        leaky.addSuppressed(new IllegalArgumentException("redis://:r3dis@cache"));
        final RuntimeException masked = Masking.exception(leaky);
        assertThat(masked).isInstanceOf(Masking.MaskedException.class);
        assertThat(masked.getStackTrace()).isEqualTo(leaky.getStackTrace());
        assertThat(masked.getMessage())
                .startsWith("java.lang.RuntimeException: ")
                .contains("apiKey=****");
        assertThat(masked.getCause().getMessage())
                .startsWith("java.sql.SQLException: ")
                .contains("u:****@h");
        assertThat(masked.getSuppressed()[0].getMessage()).contains("redis://:****@cache");
        for (Throwable t = masked; t != null; t = t.getCause()) {
            assertThat(t.toString()).doesNotContain("k3y", "pw@", "r3dis");
        }
    }
}
