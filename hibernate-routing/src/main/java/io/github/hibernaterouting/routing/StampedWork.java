package io.github.hibernaterouting.routing;

import io.github.hibernaterouting.routing.internal.bootstrap.RoutingRuntime;
import jakarta.persistence.EntityManagerFactory;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Runs a message handler so that it sees the write the message was stamped after, whatever broker
 * carries the message.
 *
 * <p>The publisher stamps the message with {@link ReadYourWrites#currentPosition} after its write
 * committed. The handler side waits a short, bounded time (100 ms by default) for a replica to
 * replay that position, then runs the handler on replicas at or past it; if none gets there, it
 * either runs the handler on the primary ({@link WhenBehind#PRIMARY}, the default) or throws
 * {@link RetryLaterException} without running it ({@link WhenBehind#RETRY}), so the queue delivers
 * the message again later with exponential backoff.
 *
 * <pre>{@code
 * StampedWork work = StampedWork.builder(emf).whenBehind(StampedWork.WhenBehind.RETRY).build();
 * // in the consumer:
 * work.run(ConsistencyToken.parse(message.header("consistency")), message.deliveryAttempt(),
 *          () -> handle(message));
 * }</pre>
 *
 * <p>Immutable and thread-safe; build one per handler.
 */
public final class StampedWork {
    /** What to do when no replica reaches the message's position within the wait. */
    public enum WhenBehind {
        /** Run the handler on the primary. */
        PRIMARY,
        /** Do not run the handler; throw {@link RetryLaterException} so the message is delivered again. */
        RETRY
    }

    private final EntityManagerFactory emf;
    private final Duration maxWait;
    private final WhenBehind whenBehind;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final boolean primaryOnly;

    private StampedWork(Builder builder) {
        this.emf = builder.emf;
        this.maxWait = builder.maxWait;
        this.whenBehind = builder.whenBehind;
        this.initialBackoff = builder.initialBackoff;
        this.maxBackoff = builder.maxBackoff;
        this.primaryOnly = builder.primaryOnly;
    }

    /** Starts configuring the handling of messages for the persistence unit {@code emf}. */
    public static Builder builder(EntityManagerFactory emf) {
        return new Builder(emf);
    }

    /** Settings of a {@link StampedWork}; {@link #build()} copies them. */
    public static final class Builder {
        private final EntityManagerFactory emf;
        private Duration maxWait = Duration.ofMillis(100);
        private WhenBehind whenBehind = WhenBehind.PRIMARY;
        private Duration initialBackoff = Duration.ofSeconds(1);
        private Duration maxBackoff = Duration.ofMinutes(1);
        private boolean primaryOnly;

        private Builder(EntityManagerFactory emf) {
            this.emf = Objects.requireNonNull(emf, "emf");
        }

        /** How long to wait for a replica to replay the message's position; default 100 ms. */
        public Builder maxWait(Duration maxWait) {
            if (maxWait.isNegative()) {
                throw new IllegalArgumentException("maxWait must not be negative: " + maxWait);
            }
            this.maxWait = maxWait;
            return this;
        }

        /** What to do when no replica gets there in time; default {@link WhenBehind#PRIMARY}. */
        public Builder whenBehind(WhenBehind whenBehind) {
            this.whenBehind = Objects.requireNonNull(whenBehind, "whenBehind");
            return this;
        }

        /** The delay before the first redelivery, doubled per attempt up to {@code max}; default 1 s to 1 min. */
        public Builder retryBackoff(Duration initial, Duration max) {
            if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
                throw new IllegalArgumentException(
                        "retry backoff needs 0 < initial <= max, got " + initial + " and " + max);
            }
            this.initialBackoff = initial;
            this.maxBackoff = max;
            return this;
        }

        /** Runs every handler on the primary, ignoring replicas: a worker that must never read stale data. */
        public Builder primaryOnly(boolean primaryOnly) {
            this.primaryOnly = primaryOnly;
            return this;
        }

        public StampedWork build() {
            return new StampedWork(this);
        }
    }

    /** {@link #call} for handlers that return nothing. */
    public void run(ConsistencyToken stamp, int deliveryAttempt, Runnable handler) {
        Objects.requireNonNull(handler, "handler");
        call(stamp, deliveryAttempt, () -> {
            handler.run();
            return null;
        });
    }

    /**
     * Runs {@code handler} so that its reads reflect {@code stamp}.
     *
     * @param stamp the message's position, or {@code null} for an unstamped message (no requirement)
     * @param deliveryAttempt 1 for the first delivery; sets the backoff of a {@link RetryLaterException}
     * @throws RetryLaterException under {@link WhenBehind#RETRY} when no replica got there; the handler did not run
     */
    public <T> T call(ConsistencyToken stamp, int deliveryAttempt, Supplier<T> handler) {
        Objects.requireNonNull(handler, "handler");
        final RoutingRuntime runtime = RoutingRuntime.of(emf);
        if (primaryOnly || runtime == null) {
            return Routing.with(Strategy.PRIMARY, handler);
        }
        if (stamp == null || runtime.awaitReplica(stamp.position(), maxWait)) {
            try (RoutingScope ignored = RoutingScope.builder().minimum(stamp).open()) {
                return handler.get();
            }
        }
        if (whenBehind == WhenBehind.RETRY && primaryReached(runtime, stamp)) {
            throw new RetryLaterException(stamp, backoff(deliveryAttempt));
        }
        return Routing.with(Strategy.PRIMARY, handler);
    }

    /**
     * Whether the primary has reached the message's position, so a replica can get there too. One it
     * has not reached was lost with the WAL of a failover (the message was stamped on the old
     * primary's history): no server will ever have that write, and the handler runs on the primary
     * rather than be delivered again forever. A primary that cannot be asked counts as reached (retry).
     */
    private static boolean primaryReached(RoutingRuntime runtime, ConsistencyToken stamp) {
        try {
            return runtime.primaryReached(stamp.position());
        } catch (java.sql.SQLException e) {
            return true;
        }
    }

    Duration backoff(int deliveryAttempt) {
        final int doublings = Math.max(0, Math.min(deliveryAttempt - 1, 30));
        final Duration delay = initialBackoff.multipliedBy(1L << doublings);
        return delay.compareTo(maxBackoff) > 0 ? maxBackoff : delay;
    }
}
