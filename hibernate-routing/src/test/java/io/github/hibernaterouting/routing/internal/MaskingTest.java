package io.github.hibernaterouting.routing.internal;

import static org.assertj.core.api.Assertions.assertThat;

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
                "jdbc:postgresql://h/db?mypassword=x | jdbc:postgresql://h/db?mypassword=x",
                "jdbc:postgresql://h:5432/db | jdbc:postgresql://h:5432/db",
            })
    void url_masksPasswordsOnly(String url, String masked) {
        assertThat(Masking.url(url)).isEqualTo(masked);
    }
}
