package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory stamp store past its capacity, on a clock the test moves. */
class StampMemoryTest {
    private static final Duration TTL = Duration.ofSeconds(60);

    private long now = 1_000L;
    private final StampMemory memory = new StampMemory(100, TTL, () -> now);

    /** Actor {@code i} writes at position {@code i + 1}. */
    private static long stampOf(int i) {
        return i + 1L;
    }

    @Test
    void pastCapacity_noActorsStampVanishes_everyActorMustMeetAtLeastItsOwnStamp() {
        int dropped = 0;
        for (int i = 0; i < 5_000; i++) {
            dropped += memory.advance("actor-" + i, stampOf(i));
            now += 1_000_000L;
        }
        assertThat(dropped).as("stamps dropped past a capacity of 100").isEqualTo(4_900);
        final List<String> vanished = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            final long required = memory.required("actor-" + i);
            if (required == ActorStamps.PRIMARY_ONLY || !Lsn.reached(required, stampOf(i))) {
                vanished.add("actor-" + i + " requires " + required + " < " + stampOf(i));
            }
        }
        assertThat(vanished).as("actors whose stamp vanished").isEmpty();
    }

    @Test
    void pastCapacity_theFloorIsTheNewestDroppedStamp_whichIsTheOldestWrite() {
        for (int i = 0; i < 5_000; i++) {
            memory.advance("actor-" + i, stampOf(i));
        }
        // Dropped in the order written, so the floor is what actor 4899 wrote, 100 writes ago: a
        // replica that lags less than that still serves every actor.
        assertThat(memory.required("never-wrote")).isEqualTo(stampOf(4_899));
        assertThat(memory.required("actor-4999"))
                .as("a kept stamp above the floor")
                .isEqualTo(stampOf(4_999));
    }

    @Test
    void rewrite_makesTheActorsStampTheNewest_soOthersAreDroppedFirst() {
        for (int i = 0; i < 100; i++) {
            memory.advance("actor-" + i, stampOf(i));
        }
        memory.advance("actor-0", 1_000);
        memory.advance("newcomer", 1_001);
        assertThat(memory.required("actor-0")).isEqualTo(1_000);
        assertThat(memory.required("never-wrote"))
                .as("actor-1's stamp was dropped, not actor-0's")
                .isEqualTo(stampOf(1));
    }

    @Test
    void floor_endsWhenTheDroppedStampsTimeToLiveWouldHaveEnded() {
        memory.advance("first", 7);
        now += 1_000L;
        for (int i = 0; i < 100; i++) {
            memory.advance("actor-" + i, 100 + i);
        }
        assertThat(memory.required("never-wrote")).isEqualTo(7);
        now += TTL.toNanos() - 1_000L - 1L;
        assertThat(memory.required("never-wrote")).as("just before").isEqualTo(7);
        now += 1L;
        assertThat(memory.required("never-wrote")).as("once the time ended").isEqualTo(Lsn.UNKNOWN);
        assertThat(memory.required("actor-0")).as("a kept stamp still holds").isEqualTo(100);
        now += 1_000L;
        assertThat(memory.required("actor-0")).as("and expires in its turn").isEqualTo(Lsn.UNKNOWN);
    }

    @Test
    void droppedPrimaryOnlyEntry_sendsActorsWithoutAStampToThePrimary_untilItsTimeEnds() {
        memory.primaryOnly("unknown-commit");
        now += 1_000L;
        for (int i = 0; i < 100; i++) {
            memory.advance("actor-" + i, 100 + i);
        }
        assertThat(memory.required("unknown-commit")).isEqualTo(ActorStamps.PRIMARY_ONLY);
        assertThat(memory.required("never-wrote")).isEqualTo(ActorStamps.PRIMARY_ONLY);
        assertThat(memory.required("actor-5")).as("an actor with a known stamp").isEqualTo(105);
        now += TTL.toNanos() - 1_000L;
        assertThat(memory.required("unknown-commit")).isEqualTo(Lsn.UNKNOWN);
    }

    @Test
    void laterCommit_replacesAPrimaryOnlyEntry_andAStampOnlyMovesForward() {
        memory.advance("a", 500);
        memory.primaryOnly("a");
        assertThat(memory.required("a")).isEqualTo(ActorStamps.PRIMARY_ONLY);
        memory.advance("a", 700);
        memory.advance("a", 600);
        assertThat(memory.required("a")).isEqualTo(700);
    }

    @Test
    void pastTheDefaultCapacity_noActorsStampVanishes() {
        final StampMemory defaults = new StampMemory(100_000, TTL, () -> now);
        final int actors = 150_000;
        long dropped = 0;
        for (int i = 0; i < actors; i++) {
            dropped += defaults.advance("actor-" + i, stampOf(i));
        }
        assertThat(dropped).isEqualTo(actors - 100_000);
        int vanished = 0;
        for (int i = 0; i < actors; i++) {
            if (!Lsn.reached(defaults.required("actor-" + i), stampOf(i))) {
                vanished++;
            }
        }
        assertThat(vanished).as("actors whose stamp vanished").isZero();
    }
}
