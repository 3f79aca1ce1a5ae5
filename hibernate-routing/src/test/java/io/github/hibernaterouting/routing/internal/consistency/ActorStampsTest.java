package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory part of actor stamps (the table and Redis parts are tested against real servers). */
class ActorStampsTest {
    private final ActorStamps stamps = new ActorStamps(
            Duration.ofSeconds(60), null, null, null, new RoutingMetrics(new SimpleMeterRegistry(), "test", List.of()));

    @Test
    void stamp_onlyMovesForward() {
        stamps.advance("a", 500, List.of());
        stamps.advance("a", 300, List.of());
        assertThat(stamps.minimumFor("a")).isEqualTo(500);
        assertThat(stamps.minimumFor("b")).isEqualTo(Lsn.UNKNOWN);
    }

    @Test
    void unknownCommitPosition_sendsTheActorToThePrimary_untilALaterCommitIsKnown() {
        stamps.advance("a", 500, List.of());
        stamps.primaryOnly("a");
        assertThat(stamps.minimumFor("a")).isEqualTo(ActorStamps.PRIMARY_ONLY);
        stamps.advance("a", 700, List.of());
        assertThat(stamps.minimumFor("a")).isEqualTo(700);
    }
}
