package io.github.hibernaterouting.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class RoutingScopeTest {
    @Test
    void innermostScopeWithAStrategy_wins_andClosingRestoresTheParent() {
        try (RoutingScope outer = RoutingScope.open(Strategy.PRIMARY)) {
            try (RoutingScope inherit = RoutingScope.open(null)) {
                assertThat(inherit.effectiveStrategy()).isEqualTo(Strategy.PRIMARY);
                try (RoutingScope inner = RoutingScope.open(Strategy.STALE_READ)) {
                    assertThat(RoutingScope.current()).isSameAs(inner);
                    assertThat(inner.effectiveStrategy()).isEqualTo(Strategy.STALE_READ);
                }
                assertThat(RoutingScope.current()).isSameAs(inherit);
            }
            assertThat(RoutingScope.current()).isSameAs(outer);
        }
        assertThat(RoutingScope.current()).isNull();
    }

    @Test
    void writeInNestedScope_marksEveryEnclosingScope() {
        try (RoutingScope outer = RoutingScope.open(null)) {
            try (RoutingScope inner = RoutingScope.open(Strategy.READ_AFTER_WRITE)) {
                // What the library does when a session in the scope writes.
                ScopeFrame.current().markWritten();
                assertThat(inner.hasWritten()).isTrue();
            }
            assertThat(outer.hasWritten()).isTrue();
        }
    }

    @Test
    void closingOutOfOrderOrOnAnotherThread_fails() throws Exception {
        try (RoutingScope outer = RoutingScope.open(null)) {
            final RoutingScope inner = RoutingScope.open(null);
            assertThatThrownBy(outer::close)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("innermost first");
            final Throwable fromOtherThread = CompletableFuture.supplyAsync(() -> {
                        try {
                            inner.close();
                            return null;
                        } catch (IllegalStateException e) {
                            return e;
                        }
                    })
                    .get();
            assertThat(fromOtherThread).hasMessageContaining("thread that opened it");
            inner.close();
        }
    }

    @Test
    void routingWith_runsUnderTheStrategy_andUnbindsAfterwards() {
        assertThat(Routing.with(Strategy.PRIMARY, () -> RoutingScope.current().effectiveStrategy()))
                .isEqualTo(Strategy.PRIMARY);
        assertThat(RoutingScope.current()).isNull();
    }

    @Test
    void strategyInterpret_acceptsNamesInAnyCase_andRejectsOthersClearly() {
        assertThat(Strategy.interpret("stale-read", "k")).isEqualTo(Strategy.STALE_READ);
        assertThat(Strategy.interpret(" ", "k")).isNull();
        assertThatThrownBy(() -> Strategy.interpret("nope", "the.key"))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("the.key")
                .hasMessageContaining("nope");
    }
}
