package io.github.hibernaterouting.routing.internal.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest {
    private final AtomicLong now = new AtomicLong();
    private final CircuitBreaker breaker = new CircuitBreaker(2, 1_000, now::get);

    @Test
    void opensAfterThreshold_andStaysOpenUntilTheTrialIsDue() {
        assertThat(breaker.onFailure()).isFalse();
        assertThat(breaker.isClosed()).isTrue();
        assertThat(breaker.onFailure()).as("second failure opens").isTrue();
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        now.set(999);
        assertThat(breaker.trialDue()).isFalse();
        now.set(1_000);
        assertThat(breaker.trialDue()).isTrue();
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
    }

    @Test
    void failedTrial_reopens_successfulTrial_closes() {
        breaker.onFailure();
        breaker.onFailure();
        now.set(1_000);
        assertThat(breaker.trialDue()).isTrue();
        breaker.onFailure();
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        now.set(2_000);
        assertThat(breaker.trialDue()).isTrue();
        breaker.onSuccess();
        assertThat(breaker.isClosed()).isTrue();
    }

    @Test
    void reopen_opensAClosedOrHalfOpenBreaker_whateverTheFailureCount_forTheWholeOpenDuration() {
        breaker.reopen();
        assertThat(breaker.state()).as("below the threshold of 2").isEqualTo(CircuitBreaker.State.OPEN);
        now.set(500);
        assertThat(breaker.trialDue()).isFalse();
        now.set(1_000);
        assertThat(breaker.trialDue()).isTrue();
        now.set(1_200);
        breaker.reopen();
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        now.set(2_199);
        assertThat(breaker.trialDue()).as("open again from the reopening").isFalse();
        now.set(2_200);
        assertThat(breaker.trialDue()).isTrue();
    }
}
