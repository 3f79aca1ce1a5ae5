package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.sample.NodeNames;
import jakarta.persistence.EntityManager;

/**
 * The {@code X-Served-By} header: which server ran the last read of an {@link EntityManager}.
 *
 * <p>A demo aid that makes routing visible from curl; an application has no need for it. It runs
 * {@code select inet_server_port()} in the same EntityManager, which the library routes like the
 * reads before it (a unit of work stays on one replica, and moves to the primary once it wrote), so
 * it costs one extra round trip per response.
 */
public final class ServedBy {
    /** The response header. */
    public static final String HEADER = "X-Served-By";

    private ServedBy() {}

    /** The name of the node {@code em}'s next read goes to, which is where its last read went. */
    public static String lastReadNode(EntityManager em, NodeNames nodeNames) {
        return lastReadNode(em, nodeNames, null);
    }

    /**
     * The same for a request whose last read had a query hint: the port query must carry the same
     * strategy, or it would be routed like the request's other reads instead.
     *
     * @param strategy the last read's hinted strategy, or {@code null} for none
     */
    public static String lastReadNode(EntityManager em, NodeNames nodeNames, Strategy strategy) {
        // Native SQL carries the routing hint as the comment the library reads (see RoutingHints).
        final String hint = strategy == null ? "" : "/*+ " + RoutingHints.strategy(strategy) + " */ ";
        final Number port = (Number)
                em.createNativeQuery(hint + "select inet_server_port()").getSingleResult();
        return nodeNames.nameOf(port.intValue());
    }
}
