package io.github.hibernaterouting.routing;

import org.hibernate.HibernateException;

/**
 * The shared Redis mutation marker could not be stored before a write, so the write was refused
 * before it reached any server.
 *
 * <p>Without the marker, other application instances could serve this actor's next read from a
 * replica that has not replayed the write. The servlet filter answers 503 (Service Unavailable);
 * the request can be retried once Redis is reachable. Reads are not affected: while Redis is down
 * they use the primary.
 */
public class ConsistencyMarkerException extends HibernateException {
    private static final long serialVersionUID = 1L;

    public ConsistencyMarkerException(String message, Throwable cause) {
        super(
                message + "; the write was refused before it reached any server. Retry once Redis is reachable, "
                        + "or run without the shared marker (unset " + RoutingSettings.REDIS_URI + ")",
                cause);
    }
}
