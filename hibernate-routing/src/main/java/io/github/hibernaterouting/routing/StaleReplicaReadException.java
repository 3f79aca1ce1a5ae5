package io.github.hibernaterouting.routing;

import org.hibernate.StaleStateException;

/**
 * An entity without {@code @Version}, or a collection of one, was read from a replica, and by the
 * time this unit of work wrote it the primary held different data (or, for a collection, the library
 * could not tell that it did not).
 *
 * <p>Writing would have overwritten the newer primary data unnoticed (a lost update), so the flush
 * fails instead; Jakarta Persistence reports it as an {@code OptimisticLockException}. Two fixes:
 * add a {@code @Version} attribute to the entity (a versioned owner's version also covers its
 * collections), or run this unit of work with {@link Strategy#PRIMARY}.
 */
public class StaleReplicaReadException extends StaleStateException {
    private static final long serialVersionUID = 1L;

    private final String entityName;
    private final transient Object identifier;
    private final String collectionRole;

    /**
     * An entity's row changed on the primary.
     *
     * @param what how the row differs, completed by " on the primary since" ("changed (text)", "was deleted")
     */
    public StaleReplicaReadException(String entityName, Object identifier, String what) {
        super("Entity " + entityName + " with id " + identifier + " was read from a replica and " + what
                + " on the primary since; refusing to overwrite it. " + fixes(entityName));
        this.entityName = entityName;
        this.identifier = identifier;
        this.collectionRole = null;
    }

    /**
     * A collection of an entity differs on the primary from what was read, or cannot be compared
     * with the primary.
     *
     * @param entityName the owner entity
     * @param identifier the owner's id
     * @param collectionRole the collection's role ({@code com.example.Shelf.tags})
     * @param what what was found, a whole clause ("changed on the primary since (…)", "cannot be
     *     compared with the primary (…)")
     */
    public StaleReplicaReadException(String entityName, Object identifier, String collectionRole, String what) {
        super("Collection " + collectionRole + " of entity " + entityName + " with id " + identifier
                + " was read from a replica and " + what
                + "; refusing to write it, which could lose rows written on the primary since. " + fixes(entityName));
        this.entityName = entityName;
        this.identifier = identifier;
        this.collectionRole = collectionRole;
    }

    private StaleReplicaReadException(String message, String entityName, Object identifier) {
        super(message);
        this.entityName = entityName;
        this.identifier = identifier;
        this.collectionRole = null;
    }

    /**
     * A {@code StatelessSession} is about to write an unversioned entity whose table it read on a
     * replica. It keeps no loaded state, so the read cannot be compared with the primary, and its
     * {@code update} or {@code upsert} writes every column.
     *
     * @param operation {@code "update"}, {@code "delete"} or {@code "upsert"}
     * @param table the table it read on a replica
     */
    public static StaleReplicaReadException unverifiable(
            String entityName, Object identifier, String operation, String table) {
        return new StaleReplicaReadException(
                "Refusing to " + operation + " entity " + entityName + " with id " + identifier
                        + ": this StatelessSession read table " + table + " on a replica, and a stateless session"
                        + " keeps no loaded state, so whether that read was current cannot be checked against the"
                        + " primary. Fix: add a @Version attribute to " + entityName + ", or read it where it is"
                        + " written: in the same read-write transaction (which a stateless session runs on the"
                        + " primary), or with Strategy.PRIMARY",
                entityName,
                identifier);
    }

    /**
     * A {@code StatelessSession} updates, upserts or deletes an unversioned entity while another
     * stateless session of the same routing scope (an HTTP request, a message handler,
     * {@code RoutingScope}) read its table on a replica: the instance may come from that read, and no
     * loaded state says whether it was current.
     *
     * @param operation "update", "upsert" or "delete"
     * @param table the table that was read, as Hibernate names it
     * @since 0.1.0
     */
    public static StaleReplicaReadException unverifiableInScope(
            String entityName, Object identifier, String operation, String table) {
        return new StaleReplicaReadException(
                "Refusing to " + operation + " entity " + entityName + " with id " + identifier
                        + ": another StatelessSession in this routing scope read table " + table + " on a replica,"
                        + " and a stateless session keeps no loaded state, so whether the instance written here"
                        + " came from that read, and whether it was current, cannot be checked against the primary."
                        + " Fix: add a @Version attribute to " + entityName + ", or read it where it is written: in"
                        + " the same read-write transaction of the same stateless session (which runs on the"
                        + " primary), or with Strategy.PRIMARY",
                entityName,
                identifier);
    }

    /**
     * A detached instance read from a replica by an earlier unit of work is merged while the row on
     * the primary changed since.
     *
     * @param what how the row differs, completed by " on the primary since" ("changed (stock)", "was deleted")
     */
    public static StaleReplicaReadException merged(String entityName, Object identifier, String what) {
        return new StaleReplicaReadException(
                "Entity " + entityName + " with id " + identifier + ", merged here, was read from a replica by an"
                        + " earlier unit of work and " + what + " on the primary since; refusing to write its state."
                        + " Fix: add a @Version attribute to " + entityName + ", read it again in this unit of work"
                        + " before changing it, or read it with Strategy.PRIMARY",
                entityName,
                identifier);
    }

    private static String fixes(String entityName) {
        return "Fix: add a @Version attribute to " + entityName + ", or run this unit of work with Strategy.PRIMARY";
    }

    /** The entity, or the owner of the collection. */
    public String getEntityName() {
        return entityName;
    }

    /** The id of the entity, or of the collection's owner. */
    public Object getIdentifier() {
        return identifier;
    }

    /** The role of the collection that was refused, or {@code null} when an entity's row was. */
    public String getCollectionRole() {
        return collectionRole;
    }
}
