package io.github.hibernaterouting.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;
import io.github.hibernaterouting.routing.internal.session.StrategyResolver;
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
    void scopeOpenedInsideOneThatWrote_knowsTheWrite_untilThatScopeCloses() {
        try (RoutingScope outer = RoutingScope.open(null)) {
            try (RoutingScope sibling = RoutingScope.open(null)) {
                ScopeFrame.current().markWritten();
            }
            try (RoutingScope nested = RoutingScope.open(Strategy.READ_AFTER_WRITE)) {
                assertThat(nested.hasWritten()).as("nothing was written in it").isFalse();
                assertThat(ScopeFrame.current().writeKnown()).isTrue();
            }
        }
        try (RoutingScope next = RoutingScope.open(null)) {
            assertThat(ScopeFrame.current().writeKnown()).isFalse();
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
    void floors_areInheritedByNestedScopes_theFreshestApplies_andWinOverMoreSpecificLevels() {
        try (RoutingScope outer =
                RoutingScope.builder().floor(Strategy.READ_AFTER_WRITE).open()) {
            assertThat(outer.effectiveStrategy())
                    .as("a floor without a strategy is the scope's strategy")
                    .isEqualTo(Strategy.READ_AFTER_WRITE);
            try (RoutingScope inner = RoutingScope.builder()
                    .strategy(Strategy.STALE_READ)
                    .floor(Strategy.PRIMARY)
                    .open()) {
                assertThat(inner.floor()).isEqualTo(Strategy.PRIMARY);
                assertThat(inner.effectiveStrategy()).isEqualTo(Strategy.STALE_READ);
                assertThat(resolve(Strategy.REPLICA, null)).isEqualTo(Strategy.PRIMARY);
                try (RoutingScope ignored =
                        RoutingScope.builder().floor(Strategy.STALE_READ).open()) {
                    assertThat(RoutingScope.current().floor()).isEqualTo(Strategy.PRIMARY);
                }
            }
            assertThat(outer.floor()).isEqualTo(Strategy.READ_AFTER_WRITE);
            assertThat(resolve(Strategy.STALE_READ, null)).isEqualTo(Strategy.READ_AFTER_WRITE);
            assertThat(resolve(null, Strategy.STALE_READ)).isEqualTo(Strategy.READ_AFTER_WRITE);
            assertThat(resolve(Strategy.REPLICA, null))
                    .as("a READ_AFTER_WRITE floor leaves REPLICA on a replica")
                    .isEqualTo(Strategy.REPLICA);
            assertThat(resolve(Strategy.PRIMARY, null)).isEqualTo(Strategy.PRIMARY);
        }
        try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
            assertThat(resolve(Strategy.STALE_READ, null))
                    .as("a strategy, unlike a floor, gives way to a more specific level")
                    .isEqualTo(Strategy.STALE_READ);
        }
    }

    private static Strategy resolve(Strategy hint, Strategy sessionProperty) {
        return StrategyResolver.resolve(hint, sessionProperty, ScopeFrame.current(), false, Strategy.READ_AFTER_WRITE);
    }

    @Test
    void positionFloor_isAMinimumToo_andReplicaIsNoFloor() {
        final ConsistencyToken earlier = ConsistencyToken.ofPosition(100);
        final ConsistencyToken later = ConsistencyToken.ofPosition(200);
        try (RoutingScope outer =
                RoutingScope.builder().floor(later).minimum(earlier).open()) {
            assertThat(outer.minimum()).isEqualTo(later);
            assertThat(ScopeFrame.current().floorPosition()).isEqualTo(200);
        }
        assertThatThrownBy(() -> RoutingScope.builder().floor(Strategy.REPLICA))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("REPLICA cannot be a freshness floor");
        assertThat(RoutingScope.current()).isNull();
    }

    @Test
    void strategyInterpret_acceptsNamesInAnyCase_andRejectsOthersClearly() {
        assertThat(Strategy.interpret("stale-read", "k")).isEqualTo(Strategy.STALE_READ);
        assertThat(Strategy.interpret(" ", "k")).isNull();
        assertThatThrownBy(() -> Strategy.interpret("nope", "the.setting"))
                .isInstanceOf(RoutingConfigurationException.class)
                .hasMessageContaining("the.setting")
                .hasMessageContaining("nope");
    }
}
