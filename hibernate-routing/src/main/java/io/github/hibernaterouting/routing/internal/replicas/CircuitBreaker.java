package io.github.hibernaterouting.routing.internal.replicas;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Keeps a failing replica out of rotation: closed, open for a while after failures, then half-open
 * for a single trial.
 *
 * <p>Thread-safe and lock-free. The background health check reports into it too, so a replica that
 * comes back is used again within one check interval.
 */
public final class CircuitBreaker {
    public enum State {
        CLOSED,
        OPEN,
        HALF_OPEN
    }

    private final int failureThreshold;
    private final long openNanos;
    private final LongSupplier clock;
    private final AtomicReference<State> state = new AtomicReference<>(State.CLOSED);
    private final AtomicInteger failures = new AtomicInteger();
    private volatile long openedAt;

    public CircuitBreaker(int failureThreshold, long openNanos, LongSupplier clock) {
        this.failureThreshold = failureThreshold;
        this.openNanos = openNanos;
        this.clock = clock;
    }

    /**
     * Whether the open period is over, so that one trial may run; moves an open breaker to half-open.
     * The health check makes that trial, so requests never wait on a replica that is still down.
     */
    public boolean trialDue() {
        final State current = state.get();
        if (current == State.HALF_OPEN) {
            return true;
        }
        if (current == State.OPEN && clock.getAsLong() - openedAt >= openNanos) {
            state.compareAndSet(State.OPEN, State.HALF_OPEN);
            return true;
        }
        return false;
    }

    /** Whether the breaker lets requests through without taking the half-open trial. */
    public boolean isClosed() {
        return state.get() == State.CLOSED;
    }

    public State state() {
        return state.get();
    }

    public void onSuccess() {
        failures.set(0);
        state.set(State.CLOSED);
    }

    /** Opens the breaker whatever the failure count: the server answers, but reads cannot use it yet. */
    public void reopen() {
        openedAt = clock.getAsLong();
        state.set(State.OPEN);
    }

    /** @return whether this failure opened the breaker */
    public boolean onFailure() {
        final int count = failures.incrementAndGet();
        final State current = state.get();
        if (current == State.HALF_OPEN || (current == State.CLOSED && count >= failureThreshold)) {
            openedAt = clock.getAsLong();
            state.set(State.OPEN);
            return current == State.CLOSED;
        }
        if (current == State.OPEN) {
            openedAt = clock.getAsLong();
        }
        return false;
    }
}
