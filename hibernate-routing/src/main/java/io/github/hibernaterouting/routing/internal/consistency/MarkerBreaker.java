package io.github.hibernaterouting.routing.internal.consistency;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The fast-fail circuit breaker in front of the Redis marker's commands, so that a Redis that is
 * down or hangs costs one timeout per open period instead of one per request. Closed, commands go
 * to Redis; a command that fails (a timeout, a broken or refused connection) opens it; while open,
 * commands fail at once without asking Redis; once the open period is over the next command is the
 * probe (half-open) and the others still fail at once; the probe's success closes it, its failure
 * opens it for another period. An error reply does not open it: Redis answered.
 *
 * <p>Lock-free, so that no thread ever waits for another's probe. Thread-safe.
 */
final class MarkerBreaker {
    static final int CLOSED = 0;
    static final int OPEN = 1;
    static final int HALF_OPEN = 2;

    private final long openNanos;
    private final LongSupplier nanoClock;
    private final AtomicInteger state = new AtomicInteger(CLOSED);
    /** When an open breaker lets its probe through, by {@link #nanoClock}. */
    private volatile long probeAt;

    /**
     * @param openNanos how long it stays open after a failure before a probe may go
     * @param nanoClock {@link System#nanoTime} but in tests
     */
    MarkerBreaker(long openNanos, LongSupplier nanoClock) {
        this.openNanos = openNanos;
        this.nanoClock = nanoClock;
    }

    /**
     * Whether a command may go to Redis now: always while closed, and for exactly one caller, the
     * probe, once the open period is over. A caller that got {@code true} must report the outcome
     * with {@link #succeeded()} or {@link #failed()}.
     */
    boolean allows() {
        final int now = state.get();
        if (now == CLOSED) {
            return true;
        }
        if (now == HALF_OPEN || nanoClock.getAsLong() - probeAt < 0) {
            return false;
        }
        return state.compareAndSet(OPEN, HALF_OPEN);
    }

    /** Redis answered. @return whether this closed an open or half-open breaker: an outage ended */
    boolean succeeded() {
        return state.getAndSet(CLOSED) != CLOSED;
    }

    /** A command failed. @return whether this opened a closed breaker: an outage began */
    boolean failed() {
        probeAt = nanoClock.getAsLong() + openNanos;
        return state.getAndSet(OPEN) == CLOSED;
    }

    /** The probe did not reach Redis (another thread was connecting): the next command may probe at once. */
    void probeSkipped() {
        state.compareAndSet(HALF_OPEN, OPEN);
    }

    /** {@link #CLOSED}, {@link #OPEN} or {@link #HALF_OPEN}, for the gauge. */
    int state() {
        return state.get();
    }
}
