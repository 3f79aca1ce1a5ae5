package io.github.hibernaterouting.routing.internal.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LagBoundsTest {
    private static final long TEN_SECONDS = TimeUnit.SECONDS.toNanos(10);
    private final LagBounds bounds = new LagBounds(true, 0, 10_000, TEN_SECONDS);

    private static long agoNanos(long millis) {
        return System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Test
    void aStandbyBehindAtItsLastAnswer_isBehindByWhatWasMeasuredPlusTheAnswersAge() {
        // 6 s behind, measured 5 s ago: it may be 11 s behind now, over the 10 s bound.
        assertThat(bounds.judge(agoNanos(5_000), agoNanos(5_000), 1, 6.0, 0, Lsn.UNKNOWN))
                .isEqualTo(ReplicaNode.Ineligibility.LAG_BOUND);
        assertThat(bounds.judge(agoNanos(3_000), agoNanos(3_000), 1, 6.0, 0, Lsn.UNKNOWN))
                .as("9 s at most")
                .isNull();
    }

    @Test
    void aStandbyCaughtUpAtItsLastAnswer_isJudgedByTheAnswersAge() {
        assertThat(bounds.judge(agoNanos(9_000), agoNanos(9_000), 0, 0.0, 0, Lsn.UNKNOWN))
                .isNull();
        assertThat(bounds.judge(agoNanos(11_000), agoNanos(11_000), 0, 0.0, 0, Lsn.UNKNOWN))
                .isEqualTo(ReplicaNode.Ineligibility.LAG_UNKNOWN);
    }

    @Test
    void withTheTimeBoundOff_onlyTheMeasurementsAgeCounts() {
        final LagBounds off = new LagBounds(true, 0, 0, TEN_SECONDS);
        assertThat(off.judge(agoNanos(5_000), agoNanos(5_000), 1, 600.0, 0, Lsn.UNKNOWN))
                .isNull();
    }
}
