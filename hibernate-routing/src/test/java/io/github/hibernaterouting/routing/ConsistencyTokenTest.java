package io.github.hibernaterouting.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConsistencyTokenTest {
    @Test
    void textForm_roundTrips_andOrdersAsUnsigned() {
        final ConsistencyToken token = ConsistencyToken.ofLsn("16/B374D848");
        assertThat(token.toString()).isEqualTo("rl1.00000016b374d848");
        assertThat(ConsistencyToken.parse(token.toString())).isEqualTo(token);
        final ConsistencyToken high = ConsistencyToken.ofLsn("FFFFFFFF/0");
        assertThat(high.compareTo(token)).isPositive();
        assertThat(token.max(high)).isSameAs(high);
        assertThat(token.max(null)).isSameAs(token);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "rl1.",
                "rl1.123",
                "rl2.00000016b374d848",
                "rl1.00000016b374d84g",
                "16/B374D848",
                "rl1.00000016b374d8480"
            })
    void parse_rejectsMalformedTokens_namingTheExpectedForm(String text) {
        assertThatThrownBy(() -> ConsistencyToken.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rl1.");
    }
}
