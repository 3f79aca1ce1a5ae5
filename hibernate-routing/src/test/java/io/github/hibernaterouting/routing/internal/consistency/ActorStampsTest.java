package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory part of actor stamps (the table and Redis parts are tested against real servers). */
class ActorStampsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ActorStamps stamps = new ActorStamps(
            Duration.ofSeconds(60), 100_000, null, null, null, new RoutingMetrics(registry, "test", List.of()));

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

    /**
     * 150,000 actors write within the time to live of a memory of 100,000 stamps: none may lose its
     * stamp, and every one dropped is counted.
     */
    @Test
    void pastTheMemorysCapacity_noActorsStampVanishes_andDroppedStampsAreCounted() {
        final int actors = 150_000;
        for (int i = 0; i < actors; i++) {
            stamps.advance("actor-" + i, 1_000L + i, List.of());
        }
        final List<String> vanished = new ArrayList<>();
        for (int i = 0; i < actors; i++) {
            final long required = stamps.minimumFor("actor-" + i);
            if (required != ActorStamps.PRIMARY_ONLY && !Lsn.reached(required, 1_000L + i)) {
                vanished.add("actor-" + i);
            }
        }
        assertThat(vanished)
                .as(
                        "actors whose next read could use a replica without their write (%d of %d)",
                        vanished.size(), actors)
                .isEmpty();
        assertThat(registry.get("hibernate.routing.actor_stamps.dropped")
                        .counter()
                        .count())
                .isEqualTo(actors - 100_000);
    }
}
