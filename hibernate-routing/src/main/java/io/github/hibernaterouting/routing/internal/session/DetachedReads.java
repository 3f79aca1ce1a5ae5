package io.github.hibernaterouting.routing.internal.session;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.sql.Connection;
import org.hibernate.CacheMode;
import org.hibernate.StatelessSession;
import org.hibernate.bytecode.enhance.spi.LazyPropertyInitializer;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.spi.MergeEvent;
import org.hibernate.persister.entity.EntityPersister;
import org.hibernate.proxy.HibernateProxy;
import org.hibernate.proxy.LazyInitializer;
import org.hibernate.type.CollectionType;
import org.hibernate.type.EntityType;
import org.hibernate.type.Type;

/**
 * The state each live instance of an unversioned entity was read with from a replica, beyond its
 * unit of work: for a detached merge. Spring Data's {@code findById} then {@code save} in two
 * units of work, or plain JPA's {@code merge} of an instance read earlier, loads the current row
 * and copies the detached state over it; the check of the unit that merges compares the primary
 * with what it loaded itself, which is current, and when the stale state happens to equal the
 * current one plus the caller's change nothing is even written and the change is lost silently.
 * So the state an instance was read with on a replica is kept here, and a merge of it is checked
 * against the primary at once ({@link ReplicaReadGuard#onMerge}).
 *
 * <p>Instances are held weakly and compared by identity; what is kept holds no entity: a
 * many-to-one is kept as its target's id, collections and one-to-ones are not kept (a detached
 * instance's collections are not checked at a merge), an embeddable is kept as a copy. An
 * instance loaded again from the primary, or whose state passed the check, is forgotten: its base
 * is current. Thread-safe: one per persistence unit.
 */
final class DetachedReads {
    /** A value not compared: a collection, a one-to-one, a lazy attribute not fetched. */
    private static final Object SKIP = new Object();

    /** Instance read on a replica (by identity, weakly) to the state it was read with. */
    private final Cache<Object, Object[]> replicaStates =
            Caffeine.newBuilder().weakKeys().build();
    /** {@code entity}, of an unversioned entity, was just loaded from a replica. */
    void loadedFromReplica(Object entity, EntityPersister persister, SharedSessionContractImplementor session) {
        replicaStates.put(entity, kept(persister, persister.getValues(entity), session));
    }

    /**
     * {@code values} (an entity's attributes, or a loaded state) in the form compared: a many-to-one
     * as its target's id, an embeddable or a basic value as a copy, what is not compared (a
     * collection, a one-to-one, a lazy attribute not fetched) as {@link #SKIP}. Holds no entity.
     */
    static Object[] kept(EntityPersister persister, Object[] values, SharedSessionContractImplementor session) {
        final Type[] types = persister.getPropertyTypes();
        final Object[] kept = new Object[values.length];
        for (int i = 0; i < values.length; i++) {
            final Object value = values[i];
            final Type type = types[i];
            if (value == LazyPropertyInitializer.UNFETCHED_PROPERTY
                    || type instanceof CollectionType
                    || type instanceof EntityType entityType && !manyToOne(entityType)) {
                kept[i] = SKIP;
            } else if (type instanceof EntityType entityType) {
                kept[i] = idOf(entityType, value, session);
            } else {
                kept[i] = type.deepCopy(value, session.getFactory());
            }
        }
        return kept;
    }

    /**
     * The row of {@code id} as the primary has it now, in the form {@link #kept} gives, or
     * {@code null} if there is none. Hibernate's database snapshot leaves embeddables out, so the
     * entity is read whole, by a stateless session on the unit's own connection (the same
     * transaction; the caller sends its reads to the primary), bypassing the second-level cache.
     */
    static Object[] onThePrimary(EntityPersister persister, Object id, SharedSessionContractImplementor session) {
        final Connection connection =
                session.getJdbcCoordinator().getLogicalConnection().getPhysicalConnection();
        try (StatelessSession reader = session.getFactory()
                .withStatelessOptions()
                .connection(connection)
                .openStatelessSession()) {
            reader.setCacheMode(CacheMode.IGNORE);
            final Object row = reader.get(persister.getEntityName(), id);
            return row == null ? null : kept(persister, persister.getValues(row), session);
        }
    }

    /** The names of the attributes that differ between two {@link #kept} states, comma-separated; empty if none. */
    static String changed(
            EntityPersister persister, Object[] read, Object[] primary, SharedSessionContractImplementor session) {
        final Type[] types = persister.getPropertyTypes();
        final boolean[] updatable = persister.getPropertyUpdateability();
        final StringBuilder names = new StringBuilder();
        for (int i = 0; i < read.length && i < primary.length; i++) {
            if (read[i] == SKIP || primary[i] == SKIP || !updatable[i]) {
                continue;
            }
            final Type compared = types[i] instanceof EntityType entityType
                    ? entityType
                            .getAssociatedEntityPersister(session.getFactory())
                            .getIdentifierType()
                    : types[i];
            if (!compared.isEqual(read[i], primary[i], session.getFactory())) {
                names.append(names.length() == 0 ? "" : ", ").append(persister.getPropertyNames()[i]);
            }
        }
        return names.toString();
    }

    /** {@code entity} was loaded from the primary: what it holds is current. */
    void loadedFromPrimary(Object entity) {
        replicaStates.invalidate(entity);
    }

    /**
     * After Hibernate's merge: the detached original, if it was read on a replica and merged into
     * another (managed) instance, with the state it was read with; else {@code null}.
     */
    Object[] readOfMergedOriginal(MergeEvent event) {
        Object original = event.getOriginal();
        final Object result = event.getResult();
        final LazyInitializer proxy = HibernateProxy.extractLazyInitializer(original);
        if (proxy != null) {
            if (proxy.isUninitialized()) {
                return null;
            }
            original = proxy.getImplementation();
        }
        if (original == null || result == null || result == original) {
            return null;
        }
        return replicaStates.getIfPresent(original);
    }

    /** {@code entity}'s state was checked against the primary, or written there: forget where it was read. */
    void current(Object entity) {
        final LazyInitializer proxy = HibernateProxy.extractLazyInitializer(entity);
        final Object instance = proxy == null ? entity : proxy.isUninitialized() ? null : proxy.getImplementation();
        if (instance != null) {
            replicaStates.invalidate(instance);
        }
    }

    /** A many-to-one to a primary key: one whose column the entity's row holds, as its target's id. */
    private static boolean manyToOne(EntityType type) {
        return !type.isOneToOne() && type.isReferenceToPrimaryKey();
    }

    /** The id of an association's target, or {@code value} itself when it is one already (a snapshot holds ids). */
    private static Object idOf(EntityType type, Object value, SharedSessionContractImplementor session) {
        if (value == null) {
            return null;
        }
        final LazyInitializer proxy = HibernateProxy.extractLazyInitializer(value);
        if (proxy != null) {
            return proxy.getInternalIdentifier();
        }
        final EntityPersister target = type.getAssociatedEntityPersister(session.getFactory());
        return target.getMappedClass().isInstance(value) ? target.getIdentifier(value, session) : value;
    }
}
