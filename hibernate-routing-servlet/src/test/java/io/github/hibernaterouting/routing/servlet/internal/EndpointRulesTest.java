package io.github.hibernaterouting.routing.servlet.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.Strategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EndpointRulesTest {
    private final EndpointRules rules =
            EndpointRules.parse("GET /auth/**=PRIMARY, /reports/*=STALE_READ,\n HEAD /reports/*/raw=replica");

    @Test
    void doubleStar_matchesAnyNumberOfSegments_includingNone() {
        assertThat(rules.match("GET", "/auth")).isEqualTo(Strategy.PRIMARY);
        assertThat(rules.match("GET", "/auth/")).isEqualTo(Strategy.PRIMARY);
        assertThat(rules.match("GET", "/auth/session/current")).isEqualTo(Strategy.PRIMARY);
        assertThat(rules.match("GET", "/authors")).isNull();
    }

    @Test
    void singleStar_matchesExactlyOneSegment() {
        assertThat(rules.match("GET", "/reports/2024")).isEqualTo(Strategy.STALE_READ);
        assertThat(rules.match("GET", "/reports")).isNull();
        assertThat(rules.match("GET", "/reports/2024/q1")).isNull();
    }

    @Test
    void method_restrictsTheRule_andWithoutOneAnySafeMethodMatches() {
        assertThat(rules.match("HEAD", "/auth/x")).as("GET-only rule").isNull();
        assertThat(rules.match("OPTIONS", "/reports/2024")).isEqualTo(Strategy.STALE_READ);
    }

    @Test
    void firstMatchingRuleWins() {
        final EndpointRules ordered = EndpointRules.parse("/a/**=PRIMARY, /a/b=STALE_READ");
        assertThat(ordered.match("GET", "/a/b")).isEqualTo(Strategy.PRIMARY);
        assertThat(rules.match("HEAD", "/reports/2024/raw")).isEqualTo(Strategy.REPLICA);
    }

    @Test
    void middleDoubleStar_backtracks() {
        final EndpointRules middle = EndpointRules.parse("/api/**/export/*=PRIMARY");
        assertThat(middle.match("GET", "/api/export/csv")).isEqualTo(Strategy.PRIMARY);
        assertThat(middle.match("GET", "/api/v1/users/export/csv")).isEqualTo(Strategy.PRIMARY);
        assertThat(middle.match("GET", "/api/v1/export")).isNull();
    }

    @Test
    void rootPattern_matchesOnlyTheRoot() {
        final EndpointRules root = EndpointRules.parse("/=PRIMARY");
        assertThat(root.match("GET", "/")).isEqualTo(Strategy.PRIMARY);
        assertThat(root.match("GET", "/x")).isNull();
    }

    @Test
    void blankRules_areNone() {
        assertThat(EndpointRules.parse(null).isEmpty()).isTrue();
        assertThat(EndpointRules.parse("  \n ").match("GET", "/x")).isNull();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "/x",
                "/x=",
                "/x=FASTEST",
                "x=PRIMARY",
                "POST /x=STALE_READ",
                "get /x=PRIMARY",
                "GET /x /y=PRIMARY",
                "/re*=PRIMARY",
                "/a//b=PRIMARY",
                "/a=b=PRIMARY",
                "/a?x=1=PRIMARY"
            })
    void badRule_failsNamingTheRuleAndTheForm(String rule) {
        assertThatThrownBy(() -> EndpointRules.parse("/ok=PRIMARY, " + rule))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + rule.trim() + "'")
                .hasMessageContaining("[METHOD] /path/pattern=STRATEGY");
    }
}
