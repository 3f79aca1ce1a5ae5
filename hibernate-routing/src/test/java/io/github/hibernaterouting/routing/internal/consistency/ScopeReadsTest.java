package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingScope;
import org.junit.jupiter.api.Test;

/** The read floor and the preferred replica a routing scope keeps for its units of work ({@link ScopeReads}). */
class ScopeReadsTest {
    @Test
    void readOnPrimaryInANestedScope_holdsForTheEnclosingOnes_untilAPositionIsTaken() {
        try (RoutingScope outer = RoutingScope.open(null)) {
            final ScopeFrame outerFrame = ScopeFrame.current();
            try (RoutingScope inner = RoutingScope.open(null)) {
                ScopeFrame.current().reads().readOnPrimary();
                assertThat(ScopeFrame.current().reads().stale()).isTrue();
            }
            assertThat(outerFrame.reads().stale())
                    .as("the enclosing scope's later units need a floor too")
                    .isTrue();
            outerFrame.reads().floor(42);
            assertThat(outerFrame.reads().stale()).isFalse();
            assertThat(outerFrame.reads().floor()).isEqualTo(42);
        }
    }

    @Test
    void aNestedScope_inheritsTheEnclosingFloor_andAStaleEnclosingScope() {
        try (RoutingScope outer = RoutingScope.open(null)) {
            final ScopeFrame outerFrame = ScopeFrame.current();
            outerFrame.reads().floor(7);
            outerFrame.reads().readOnPrimary();
            try (RoutingScope inner = RoutingScope.open(null)) {
                final ScopeFrame innerFrame = ScopeFrame.current();
                assertThat(innerFrame.reads().floor()).isEqualTo(7);
                assertThat(innerFrame.reads().stale()).isTrue();
                // Taken on the scope's thread after every read there: it covers the enclosing scope's reads too.
                innerFrame.reads().floor(9);
                assertThat(outerFrame.reads().stale()).isFalse();
            }
            assertThat(outerFrame.reads().floor()).isEqualTo(9);
        }
    }

    @Test
    void floorNeverMovesBack() {
        try (RoutingScope scope = RoutingScope.open(null)) {
            final ScopeFrame frame = ScopeFrame.current();
            frame.reads().floor(9);
            frame.reads().floor(7);
            assertThat(frame.reads().floor()).isEqualTo(9);
        }
    }

    @Test
    void aNestedScopesReplica_isPreferredByTheEnclosingScopeAfterwards() {
        final Object first = new Object();
        final Object second = new Object();
        try (RoutingScope outer = RoutingScope.open(null)) {
            final ScopeFrame outerFrame = ScopeFrame.current();
            assertThat(outerFrame.reads().replica()).isNull();
            outerFrame.reads().replicaUsed(first);
            try (RoutingScope inner = RoutingScope.open(null)) {
                assertThat(ScopeFrame.current().reads().replica()).isSameAs(first);
                ScopeFrame.current().reads().replicaUsed(second);
            }
            assertThat(outerFrame.reads().replica()).isSameAs(second);
        }
    }

    @Test
    void scopeWhoseUnitsNeverReadOnThePrimary_hasNoFloor() {
        try (RoutingScope scope = RoutingScope.open(null)) {
            assertThat(ScopeFrame.current().reads().stale()).isFalse();
            assertThat(ScopeFrame.current().reads().floor()).isEqualTo(Lsn.UNKNOWN);
        }
    }
}
