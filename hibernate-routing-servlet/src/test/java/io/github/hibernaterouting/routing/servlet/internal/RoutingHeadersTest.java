package io.github.hibernaterouting.routing.servlet.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.servlet.internal.RoutingHeaders.InvalidHeaderException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RoutingHeadersTest {
    private static Enumeration<String> values(String... values) {
        return Collections.enumeration(List.of(values));
    }

    @Test
    void forcePrimary_trueForcesAndFalseOrAbsentDoNot() throws Exception {
        assertThat(RoutingHeaders.forcePrimary(values("true"))).isTrue();
        assertThat(RoutingHeaders.forcePrimary(values(" TRUE "))).isTrue();
        assertThat(RoutingHeaders.forcePrimary(values("false"))).isFalse();
        assertThat(RoutingHeaders.forcePrimary(values())).isFalse();
        assertThat(RoutingHeaders.forcePrimary(null)).isFalse();
        assertThat(RoutingHeaders.forcePrimary(values("false", "true")))
                .as("any true among repeated headers")
                .isTrue();
    }

    @Test
    void forcePrimary_anyOtherValue_isRejectedNamingTheHeaderAndTheAllowedValues() {
        for (String bad : List.of("yes", "1", "", "true, maybe", "primary")) {
            assertThatThrownBy(() -> RoutingHeaders.forcePrimary(values(bad)))
                    .isInstanceOf(InvalidHeaderException.class)
                    .hasMessageContaining("X-Force-Primary")
                    .hasMessageContaining("'true'")
                    .hasMessageContaining("'false'");
        }
    }

    @Test
    void consistency_onlyStrongIsAllowed_andNobodyCanAskForAReplica() throws Exception {
        assertThat(RoutingHeaders.strongConsistency(values("strong"))).isTrue();
        assertThat(RoutingHeaders.strongConsistency(values())).isFalse();
        for (String bad : List.of("eventual", "replica", "", "strong, weak")) {
            assertThatThrownBy(() -> RoutingHeaders.strongConsistency(values(bad)))
                    .isInstanceOf(InvalidHeaderException.class)
                    .hasMessageContaining("Consistency header")
                    .hasMessageContaining("'strong'");
        }
    }

    @Test
    void consistencyToken_isParsed_andTheLatestOfSeveralWins() throws Exception {
        final ConsistencyToken early = ConsistencyToken.ofPosition(0x10);
        final ConsistencyToken late = ConsistencyToken.ofPosition(0x2000);
        assertThat(RoutingHeaders.minimum(values(early.toString()))).isEqualTo(early);
        assertThat(RoutingHeaders.minimum(values(late.toString(), early.toString())))
                .isEqualTo(late);
        assertThat(RoutingHeaders.minimum(values(early + ", " + late))).isEqualTo(late);
        assertThat(RoutingHeaders.minimum(values())).isNull();
    }

    @Test
    void consistencyToken_malformed_isRejectedWithTheExpectedForm() {
        for (String bad : List.of("", "rl1.xyz", "0/16B3748", "rl1.00000000000000zz", "rl2.0000000000000010")) {
            assertThatThrownBy(() -> RoutingHeaders.minimum(values(bad)))
                    .isInstanceOf(InvalidHeaderException.class)
                    .hasMessageContaining("X-Consistency-Token")
                    .hasMessageContaining("'rl1.' followed by 16 hexadecimal digits");
        }
    }

    @Test
    void consistencyToken_withTheTopBitSet_isRejectedSayingWhy_soItCannotBeTheLibrarysPrimaryOnlyValue() {
        for (String bad :
                List.of("rl1.ffffffffffffffff", "rl1.8000000000000000", "rl1.0000000000000010, rl1.ffffffffffffffff")) {
            assertThatThrownBy(() -> RoutingHeaders.minimum(values(bad)))
                    .isInstanceOf(InvalidHeaderException.class)
                    .hasMessageContaining("X-Consistency-Token")
                    .hasMessageContaining("top bit")
                    .hasMessageContaining("no write returned it");
        }
    }

    @Test
    void errorMessages_quoteTheValueShortenedAndPrintableOnly() {
        final String value = "\u0007evil\r\nInjected: header" + "x".repeat(100);
        assertThatThrownBy(() -> RoutingHeaders.forcePrimary(values(value)))
                .message()
                .doesNotContain("\r", "\n", "\u0007")
                .doesNotContain("x".repeat(41))
                .contains("...");
    }

    @Test
    void subscriptions_areServerSentEventsAndWebSocketUpgrades() {
        assertThat(RoutingHeaders.isSubscription(values("text/event-stream"), values()))
                .isTrue();
        assertThat(RoutingHeaders.isSubscription(values("application/json, Text/Event-Stream;q=0.5"), null))
                .isTrue();
        assertThat(RoutingHeaders.isSubscription(values(), values("websocket"))).isTrue();
        assertThat(RoutingHeaders.isSubscription(null, values("h2c, WebSocket")))
                .isTrue();
        assertThat(RoutingHeaders.isSubscription(values("application/json"), values("h2c")))
                .isFalse();
    }

    @Test
    void requestId_validIdIsKept_anythingElseIsReplacedByAGeneratedOne() {
        assertThat(RoutingHeaders.requestId("abc-123_X.y")).isEqualTo("abc-123_X.y");
        assertThat(RoutingHeaders.requestId("a".repeat(100))).hasSize(100);
        for (String bad : new String[] {null, "", "a".repeat(101), "has space", "new\nline", "semi;colon", "ünï"}) {
            final String id = RoutingHeaders.requestId(bad);
            assertThat(id).isNotEqualTo(bad).matches("[0-9a-f-]{36}");
        }
        assertThat(RoutingHeaders.requestId(null)).isNotEqualTo(RoutingHeaders.requestId(null));
    }
}
