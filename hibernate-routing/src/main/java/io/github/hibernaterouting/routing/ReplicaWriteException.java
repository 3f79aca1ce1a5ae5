package io.github.hibernaterouting.routing;

import org.hibernate.HibernateException;

/**
 * A unit of work running under {@link Strategy#REPLICA} tried to write.
 *
 * <p>Thrown before the statement reaches any server, so nothing was written. Under
 * {@code REPLICA} the library refuses to move a write to the primary quietly; run the unit of work
 * with {@link Strategy#READ_AFTER_WRITE} or {@link Strategy#PRIMARY} if it must write.
 */
public class ReplicaWriteException extends HibernateException {
    private static final long serialVersionUID = 1L;

    public ReplicaWriteException(String what) {
        super("Strategy REPLICA does not allow writes, but this unit of work tried to " + what
                + "; nothing was sent to any server. Run it with Strategy.READ_AFTER_WRITE or Strategy.PRIMARY "
                + "(for example Routing.with(Strategy.PRIMARY, ...) or the property '" + RoutingSettings.STRATEGY
                + "')");
    }
}
