package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingScope;
import org.junit.jupiter.api.Test;

/** The read floor and the preferred replica a routing scope keeps for its units of work. */
class ScopeReadFloorTest {
    @Test
    void readOnPrimaryInANestedScope_holdsForTheEnclosingOnes_untilAPositionIsTaken() {
        try (RoutingScope outer = RoutingScope.open(null)) {
            final ScopeFrame outerFrame = ScopeFrame.current();
            try (RoutingScope inner = RoutingScope.open(null)) {
                ScopeFrame.current().readOnPrimary();
                assertThat(ScopeFrame.current().readFloorStale()).isTrue();
            }
            assertThat(outerFrame.readFloorStale())
                    .as("the enclosing scope's later units need a floor too")
                    .isTrue();
            outerFrame.readFloor(42);
            assertThat(outerFrame.readFloorStale()).isFalse();
            assertThat(outerFrame.readFloor()).isEqualTo(42);
        }
    }

    @Test
    void aNestedScope_inheritsTheEnclosingFloor_andAStaleEnclosingScope() {
        try (RoutingScope outer = RoutingScope.open(null)) {
            final ScopeFrame outerFrame = ScopeFrame.current();
            outerFrame.readFloor(7);
            outerFrame.readOnPrimary();
            try (RoutingScope inner = RoutingScope.open(null)) {
                final ScopeFrame innerFrame = ScopeFrame.current();
                assertThat(innerFrame.readFloor()).isEqualTo(7);
                assertThat(innerFrame.readFloorStale()).isTrue();
                // Taken on the scope's thread after every read there: it covers the enclosing scope's reads too.
                innerFrame.readFloor(9);
                assertThat(outerFrame.readFloorStale()).isFalse();
            }
            assertThat(outerFrame.readFloor()).isEqualTo(9);
        }
    }

    @Test
    void floorNeverMovesBack() {
        try (RoutingScope scope = RoutingScope.open(null)) {
            final ScopeFrame frame = ScopeFrame.current();
            frame.readFloor(9);
            frame.readFloor(7);
            assertThat(frame.readFloor()).isEqualTo(9);
        }
    }

    @Test
    void aNestedScopesReplica_isPreferredByTheEnclosingScopeAfterwards() {
        final Object first = new Object();
        final Object second = new Object();
        try (RoutingScope outer = RoutingScope.open(null)) {
            final ScopeFrame outerFrame = ScopeFrame.current();
            assertThat(outerFrame.replica()).isNull();
            outerFrame.replicaUsed(first);
            try (RoutingScope inner = RoutingScope.open(null)) {
                assertThat(ScopeFrame.current().replica()).isSameAs(first);
                ScopeFrame.current().replicaUsed(second);
            }
            assertThat(outerFrame.replica()).isSameAs(second);
        }
    }

    @Test
    void scopeWhoseUnitsNeverReadOnThePrimary_hasNoFloor() {
        try (RoutingScope scope = RoutingScope.open(null)) {
            assertThat(ScopeFrame.current().readFloorStale()).isFalse();
            assertThat(ScopeFrame.current().readFloor()).isEqualTo(Lsn.UNKNOWN);
        }
    }
}
