package io.github.hibernaterouting.routing;

import org.hibernate.StaleStateException;

/**
 * An entity without {@code @Version} was read from a replica, and by the time this unit of work
 * updated or deleted it the primary held different data.
 *
 * <p>Writing would have overwritten the newer primary data unnoticed (a lost update), so the flush
 * fails instead; Jakarta Persistence reports it as an {@code OptimisticLockException}. Two fixes:
 * add a {@code @Version} attribute to the entity, or run this unit of work with
 * {@link Strategy#PRIMARY}.
 */
public class StaleReplicaReadException extends StaleStateException {
    private static final long serialVersionUID = 1L;

    private final String entityName;
    private final transient Object identifier;

    public StaleReplicaReadException(String entityName, Object identifier, String what) {
        super("Entity " + entityName + " with id " + identifier + " was read from a replica and " + what
                + " on the primary since; refusing to overwrite it. Fix: add a @Version attribute to "
                + entityName + ", or run this unit of work with Strategy.PRIMARY");
        this.entityName = entityName;
        this.identifier = identifier;
    }

    public String getEntityName() {
        return entityName;
    }

    public Object getIdentifier() {
        return identifier;
    }
}
