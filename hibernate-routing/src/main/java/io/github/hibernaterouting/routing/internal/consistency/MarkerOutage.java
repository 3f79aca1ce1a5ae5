package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.sql.internal.Masking;
import io.lettuce.core.RedisException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redis outage as the mutation marker sees it, through its {@link MarkerBreaker}: logged once as it
 * begins (WARN) and once as it ends (INFO), every command failed or refused in between at DEBUG with a
 * running count, so that a Redis that is down costs the log one line, not one per request. Thread-safe.
 */
final class MarkerOutage {
    private static final Logger LOG = LoggerFactory.getLogger(RedisMarker.class);

    private final MarkerBreaker breaker;
    private final String maskedUri;
    /** Commands failed or refused since the outage began, for the line that says it ended. */
    private final AtomicLong failures = new AtomicLong();
    /** When the outage began ({@link System#currentTimeMillis()}), {@code 0} while there is none. */
    private volatile long since;
    /** The message of the failure that last opened the breaker, masked. */
    private volatile String lastFailure;

    MarkerOutage(MarkerBreaker breaker, String maskedUri) {
        this.breaker = breaker;
        this.maskedUri = maskedUri;
    }

    boolean ongoing() {
        return since != 0;
    }

    /** A command the open breaker refused: counted; returns why, for its exception. */
    String rejected(String what) {
        LOG.debug(
                "Did not {} the mutation marker: Redis at {} failed moments ago ({} commands failed or"
                        + " refused in this outage)",
                what,
                maskedUri,
                failures.incrementAndGet());
        return "not asked, as it failed moments ago (" + lastFailure
                + ") and is asked again once its timeout has passed";
    }

    /** A command failed against a Redis that is down or hangs: opens the breaker, and logs the outage once. */
    void began(String what, RedisException e) {
        lastFailure = Masking.text(e.getMessage());
        final long failed = failures.incrementAndGet();
        if (breaker.failed()) {
            since = System.currentTimeMillis();
            LOG.warn(
                    "Could not {} the mutation marker in Redis at {}: {}; actors' reads use the primary and their"
                            + " mutations are refused until it answers (asked again once per timeout; further"
                            + " failures are logged at DEBUG until it answers)",
                    what,
                    maskedUri,
                    Masking.text(e.getMessage()));
        } else {
            LOG.debug(
                    "Could not {} the mutation marker in Redis at {}: {} ({} commands failed or refused in this"
                            + " outage)",
                    what,
                    maskedUri,
                    Masking.text(e.getMessage()),
                    failed);
        }
    }

    /** Redis answered: closes the breaker, and says so if an outage ended. */
    void ended() {
        if (breaker.succeeded()) {
            final long began = since;
            since = 0;
            LOG.info(
                    "Redis at {} answers again, after {} ms; {} mutation marker commands failed or were refused"
                            + " meanwhile",
                    maskedUri,
                    began == 0 ? 0 : System.currentTimeMillis() - began,
                    failures.getAndSet(0));
        }
    }
}
