package io.github.hibernaterouting.routing;

import java.time.Duration;

/**
 * A stamped message arrived before any replica replayed the write it refers to, and its handler
 * is configured to wait for a replica rather than load the primary ({@link StampedWork.WhenBehind#RETRY}).
 *
 * <p>The handler did not run. Give the message back to the queue to be delivered again after
 * {@link #retryAfter()}: back-pressure instead of overloading the primary when replicas fall behind.
 */
public class RetryLaterException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Duration retryAfter;

    public RetryLaterException(ConsistencyToken required, Duration retryAfter) {
        super("No replica has replayed " + required + " yet; the handler did not run. Deliver the message again after "
                + retryAfter.toMillis() + " ms");
        this.retryAfter = retryAfter;
    }

    /** How long to wait before the next delivery: grows exponentially with the delivery attempt. */
    public Duration retryAfter() {
        return retryAfter;
    }
}
