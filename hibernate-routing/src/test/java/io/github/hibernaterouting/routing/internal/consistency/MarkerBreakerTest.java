package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The Redis marker's breaker, on a clock the test moves: one failure opens it, one probe half-opens it. */
class MarkerBreakerTest {
    private static final long OPEN = 1_000_000_000L;

    private final AtomicLong clock = new AtomicLong(42);
    private final MarkerBreaker breaker = new MarkerBreaker(OPEN, clock::get);

    @Test
    void failure_failsEveryCommandAtOnce_untilTheOpenPeriodIsOver() {
        assertThat(breaker.allows()).isTrue();
        assertThat(breaker.failed()).as("the first failure begins an outage").isTrue();
        assertThat(breaker.allows()).isFalse();
        clock.addAndGet(OPEN - 1);
        assertThat(breaker.allows()).as("still open").isFalse();
    }

    @Test
    void afterTheOpenPeriod_exactlyOneCommandProbes_andItsSuccessClosesTheBreaker() {
        breaker.failed();
        clock.addAndGet(OPEN);
        assertThat(breaker.allows()).as("the probe").isTrue();
        assertThat(breaker.allows())
                .as("a second command while the probe is out")
                .isFalse();
        assertThat(breaker.state()).isEqualTo(MarkerBreaker.HALF_OPEN);
        assertThat(breaker.succeeded())
                .as("the probe's success ends the outage")
                .isTrue();
        assertThat(breaker.allows()).isTrue();
        assertThat(breaker.allows()).isTrue();
        assertThat(breaker.succeeded()).as("no outage to end").isFalse();
    }

    @Test
    void failedProbe_opensTheBreakerForAnotherPeriod_withoutBeginningAnotherOutage() {
        breaker.failed();
        clock.addAndGet(OPEN);
        assertThat(breaker.allows()).isTrue();
        assertThat(breaker.failed()).as("the same outage goes on").isFalse();
        assertThat(breaker.allows()).isFalse();
        clock.addAndGet(OPEN);
        assertThat(breaker.allows()).isTrue();
    }

    @Test
    void probeThatNeverReachedRedis_letsTheNextCommandProbe() {
        breaker.failed();
        clock.addAndGet(OPEN);
        assertThat(breaker.allows()).isTrue();
        breaker.probeSkipped();
        assertThat(breaker.allows()).isTrue();
    }

    @Test
    void concurrentFailuresWhileClosed_beginOneOutage() {
        assertThat(breaker.failed()).isTrue();
        assertThat(breaker.failed()).isFalse();
        assertThat(breaker.state()).isEqualTo(MarkerBreaker.OPEN);
    }
}
