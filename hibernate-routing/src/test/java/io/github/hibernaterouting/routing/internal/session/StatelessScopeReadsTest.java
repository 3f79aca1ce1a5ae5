package io.github.hibernaterouting.routing.internal.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingScope;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatelessScopeReadsTest {
    private static final String READ_NOTE = "select n1_0.id,n1_0.text from note n1_0 where n1_0.id=?";

    @Test
    void aReadInAScope_isSeenInThatScope_andEndsWithIt() {
        final StatelessScopeReads reads = new StatelessScopeReads();
        try (RoutingScope request = RoutingScope.open(null)) {
            reads.ran(READ_NOTE);
            assertThat(reads.readOne(List.of("account", "note"))).isEqualTo("note");
            assertThat(reads.readOne(List.of("account"))).isNull();
        }
        try (RoutingScope next = RoutingScope.open(null)) {
            assertThat(reads.readOne(List.of("note"))).as("another scope").isNull();
        }
    }

    @Test
    void aReadInANestedScope_isSeenInTheEnclosingOne() {
        final StatelessScopeReads reads = new StatelessScopeReads();
        try (RoutingScope request = RoutingScope.open(null)) {
            try (RoutingScope nested = RoutingScope.open(null)) {
                reads.ran(READ_NOTE);
            }
            assertThat(reads.readOne(List.of("note"))).isEqualTo("note");
        }
    }

    @Test
    void outsideAnyScope_nothingIsShared() {
        final StatelessScopeReads reads = new StatelessScopeReads();
        reads.ran(READ_NOTE);
        assertThat(reads.readOne(List.of("note"))).isNull();
    }
}
