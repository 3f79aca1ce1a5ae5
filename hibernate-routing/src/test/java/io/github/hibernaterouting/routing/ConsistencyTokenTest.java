package io.github.hibernaterouting.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.internal.consistency.ActorStamps;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConsistencyTokenTest {
    @Test
    void textForm_roundTrips_andOrdersAsUnsigned() {
        final ConsistencyToken token = ConsistencyToken.ofLsn("16/B374D848");
        assertThat(token.toString()).isEqualTo("rl1.00000016b374d848");
        assertThat(ConsistencyToken.parse(token.toString())).isEqualTo(token);
        final ConsistencyToken high = ConsistencyToken.ofLsn("7FFFFFFF/0");
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

    @ParameterizedTest
    @ValueSource(strings = {"rl1.ffffffffffffffff", "rl1.8000000000000000", "rl1.FFFFFFFF00000000"})
    void parse_rejectsPositionsNoWalCanHave_soNoClientValueIsAnInternalSentinel(String text) {
        assertThatThrownBy(() -> ConsistencyToken.parse(text))
                .isInstanceOf(InvalidConsistencyTokenException.class)
                .hasMessageContaining("top bit")
                .hasMessageContaining("no write returned it");
    }

    @Test
    void noFactory_makesATokenOfTheInternalPrimaryOnlyValue() {
        assertThatThrownBy(() -> ConsistencyToken.ofPosition(ActorStamps.PRIMARY_ONLY))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("top bit");
        assertThatThrownBy(() -> ConsistencyToken.ofLsn("FFFFFFFF/FFFFFFFF"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("top bit");
        assertThat(ConsistencyToken.parse("rl1.7fffffffffffffff").position())
                .as("the highest position a WAL can have is still a token; only the primary can say it was not reached")
                .isEqualTo(Long.MAX_VALUE);
    }
}
