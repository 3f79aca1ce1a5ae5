package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.StaleReplicaReadException;
import java.io.Serializable;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.collection.spi.PersistentCollection;
import org.hibernate.engine.spi.CollectionEntry;
import org.hibernate.engine.spi.EntityEntry;
import org.hibernate.engine.spi.PersistenceContext;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.spi.AbstractCollectionEvent;
import org.hibernate.persister.collection.CollectionPersister;
import org.hibernate.persister.entity.EntityPersister;
import org.hibernate.type.CompositeType;
import org.hibernate.type.Type;

/**
 * The lost-update check of collections whose owner has no version: which collections a session
 * initialized from a replica, and, before one of them is written, whether the primary still holds
 * what was read.
 *
 * <p>Hibernate writes a collection from the snapshot it took when it loaded it: a bag is deleted and
 * inserted again, a set, list or map that became empty is deleted with one statement, changed list
 * positions and map values are updated in place. A snapshot read on a lagging replica would wipe or
 * overwrite rows written on the primary since. So the stored snapshot is compared with the primary's
 * rows first, in the unit of work's transaction, with the collection persister's own SQL (its size,
 * whether an element exists, the element at an index), routed to the primary by
 * {@link SessionRouting#onPrimary}. A kind of collection that cannot be compared exactly that way (a
 * bag with repeated elements, elements with null values, {@code @Any} elements, a collection under
 * an enabled filter) is refused rather than written unchecked.
 *
 * <p>Collections of versioned owners need none of this (a change increments the owner's version,
 * whose check runs on the primary), nor do inverse collections (Hibernate writes nothing for them).
 */
final class ReplicaCollections {
    private static final String CHANGED = "changed on the primary since (";
    private static final String CANNOT = "cannot be compared with the primary (";

    private ReplicaCollections() {}

    /** Whether writing {@code persister}'s collections from a stale snapshot could lose rows unnoticed. */
    static boolean needsCheck(CollectionPersister persister) {
        return persister != null && persister.isMutable() && !persister.isInverse() && !persister.isVersioned();
    }

    /**
     * After Hibernate initialized {@code collection} on its own (lazily, or eagerly by a select of its
     * own): remembers it if that read may have come from a replica, and so every other collection of
     * the same role the statement initialized with it (batch and subselect fetching raise no event for
     * those). Conservative: a collection of that role initialized earlier in the session is taken for
     * one of them, which costs its check but never skips one.
     */
    static void initialized(PersistentCollection<?> collection, SharedSessionContractImplementor session) {
        if (!collection.wasInitialized()) {
            return;
        }
        final SessionRouting unit = SessionRouting.readingReplica(session);
        if (unit == null) {
            return;
        }
        final PersistenceContext context = session.getPersistenceContextInternal();
        final CollectionEntry entry = context.getCollectionEntry(collection);
        final CollectionPersister persister = entry == null ? null : entry.getLoadedPersister();
        if (!needsCheck(persister)) {
            return;
        }
        unit.collectionLoadedFromReplica(collection);
        if (persister.getBatchSize() > 1 || persister.isSubselectLoadable()) {
            context.forEachCollectionEntry(
                    (other, otherEntry) -> {
                        if (otherEntry.getLoadedPersister() == persister
                                && other.wasInitialized()
                                && otherEntry.getSnapshot() != null) {
                            unit.collectionLoadedFromReplica(other);
                        }
                    },
                    false);
        }
    }

    /** After an entity was loaded from a replica: remembers the collections loaded with it (fetched by a join). */
    static void ownerLoaded(
            SessionRouting unit, Object entity, EntityPersister persister, SharedSessionContractImplementor session) {
        if (!persister.hasCollections()) {
            return;
        }
        final PersistenceContext context = session.getPersistenceContextInternal();
        final EntityEntry entry = context.getEntry(entity);
        final Object[] state = entry == null ? null : entry.getLoadedState();
        if (state == null) {
            return;
        }
        for (Object value : state) {
            if (value instanceof PersistentCollection<?> collection && collection.wasInitialized()) {
                final CollectionEntry collectionEntry = context.getCollectionEntry(collection);
                if (collectionEntry != null && needsCheck(collectionEntry.getLoadedPersister())) {
                    unit.collectionLoadedFromReplica(collection);
                }
            }
        }
    }

    /**
     * Before the collection of {@code event} is written: if it was read from a replica, compares
     * what was read with the primary.
     *
     * @throws StaleReplicaReadException naming the owner, its id and the collection, if the primary
     *     differs or cannot be compared
     */
    static void verify(SessionRouting unit, AbstractCollectionEvent event) {
        final PersistentCollection<?> collection = event.getCollection();
        if (unit == null || !unit.wasCollectionLoadedFromReplica(collection)) {
            return;
        }
        final SharedSessionContractImplementor session = event.getSession();
        final CollectionEntry entry = session.getPersistenceContextInternal().getCollectionEntry(collection);
        final CollectionPersister persister = entry == null ? null : entry.getLoadedPersister();
        final Object key = entry == null ? null : entry.getLoadedKey();
        final Serializable snapshot = entry == null ? null : entry.getSnapshot();
        if (persister != null && key != null && snapshot != null) {
            final Object owner = event.getAffectedOwnerOrNull();
            final String difference = unit.onPrimary(() -> difference(persister, key, snapshot, owner, session));
            if (difference != null) {
                final String ownerName = event.getAffectedOwnerEntityName();
                final Object ownerId = event.getAffectedOwnerIdOrNull();
                throw new StaleReplicaReadException(
                        ownerName != null
                                ? ownerName
                                : persister.getOwnerEntityPersister().getEntityName(),
                        ownerId != null ? ownerId : key,
                        persister.getRole(),
                        difference);
            }
        }
        unit.collectionVerified(collection);
    }

    /** How the primary's rows of the collection differ from {@code snapshot}, or why they cannot be compared; {@code null} if they are the same. */
    private static String difference(
            CollectionPersister persister,
            Object key,
            Serializable snapshot,
            Object owner,
            SharedSessionContractImplementor session) {
        if (persister.isAffectedByEnabledFilters(session)) {
            return CANNOT + "a filter is enabled for it, so its rows on the primary are not all it holds)";
        }
        final Type elements = persister.getElementType();
        if (elements.isAnyType()
                || persister.hasIndex() && persister.getIndexType().isAnyType()) {
            return CANNOT + "@Any elements or keys)";
        }
        return switch (persister.getCollectionSemantics().getCollectionClassification()) {
            case SET, ORDERED_SET, SORTED_SET, BAG, ID_BAG -> unordered(persister, key, values(snapshot), session);
            case LIST, ARRAY -> indexed(persister, key, positions(snapshot), owner, session);
            case MAP, ORDERED_MAP, SORTED_MAP ->
                snapshot instanceof Map<?, ?> map
                        ? keyed(persister, key, map, owner, session)
                        : CANNOT + "an unexpected snapshot)";
        };
    }

    /**
     * The same elements, none repeated: as many rows on the primary as were read, and each element
     * read is there. Repeated elements or null values (which {@code =} never matches) cannot be
     * compared that way.
     */
    private static String unordered(
            CollectionPersister persister, Object key, Collection<?> read, SharedSessionContractImplementor session) {
        if (read == null) {
            return CANNOT + "an unexpected snapshot)";
        }
        final Type type = persister.getElementType();
        final SessionFactoryImplementor factory = session.getFactory();
        final Map<Integer, List<Object>> seen = new HashMap<>();
        for (Object element : read) {
            if (hasNull(type, element)) {
                return CANNOT + "an element with a null value)";
            }
            final List<Object> sameHash =
                    seen.computeIfAbsent(type.getHashCode(element, factory), h -> new ArrayList<>(1));
            for (Object other : sameHash) {
                if (type.isEqual(other, element, factory)) {
                    return CANNOT + "a bag with repeated elements)";
                }
            }
            sameHash.add(element);
        }
        final int there = persister.getSize(key, session);
        if (there != read.size()) {
            return sizes(there, read.size());
        }
        for (Object element : read) {
            if (!persister.elementExists(key, element, session)) {
                return CHANGED + "an element read here is no longer there)";
            }
        }
        return null;
    }

    /** The same element at every position, and no position beyond the last one read. */
    private static String indexed(
            CollectionPersister persister,
            Object key,
            List<?> read,
            Object owner,
            SharedSessionContractImplementor session) {
        if (read == null) {
            return CANNOT + "an unexpected snapshot)";
        }
        final int there = persister.getSize(key, session);
        if (there != read.size()) {
            return sizes(there, read.size());
        }
        final Type type = persister.getElementType();
        for (int position = 0; position < read.size(); position++) {
            final Object element = read.get(position);
            final boolean same = element == null
                    ? !persister.indexExists(key, position, session)
                    : type.isEqual(
                            element, persister.getElementByIndex(key, position, session, owner), session.getFactory());
            if (!same) {
                return CHANGED + "the element at position " + position + " differs)";
            }
        }
        return null;
    }

    /** As many entries on the primary as were read, and the same value under every key read. */
    private static String keyed(
            CollectionPersister persister,
            Object key,
            Map<?, ?> read,
            Object owner,
            SharedSessionContractImplementor session) {
        final int there = persister.getSize(key, session);
        if (there != read.size()) {
            return sizes(there, read.size());
        }
        final Type type = persister.getElementType();
        for (Map.Entry<?, ?> entry : read.entrySet()) {
            final Object value = entry.getValue();
            final boolean same = value == null
                    ? !persister.indexExists(key, entry.getKey(), session)
                    : type.isEqual(
                            value,
                            persister.getElementByIndex(key, entry.getKey(), session, owner),
                            session.getFactory());
            if (!same) {
                return CHANGED + "the value of a key read here differs)";
            }
        }
        return null;
    }

    private static String sizes(int there, int read) {
        return CHANGED + there + (there == 1 ? " element" : " elements") + " there, " + read + " read)";
    }

    /** The elements of a set's, a bag's or an id bag's snapshot. */
    private static Collection<?> values(Serializable snapshot) {
        if (snapshot instanceof Map<?, ?> map) {
            return map.values();
        }
        return snapshot instanceof Collection<?> collection ? collection : null;
    }

    /** The elements of a list's or an array's snapshot, by position. */
    private static List<?> positions(Serializable snapshot) {
        if (snapshot instanceof List<?> list) {
            return list;
        }
        if (snapshot != null && snapshot.getClass().isArray()) {
            final List<Object> elements = new ArrayList<>(Array.getLength(snapshot));
            for (int i = 0; i < Array.getLength(snapshot); i++) {
                elements.add(Array.get(snapshot, i));
            }
            return elements;
        }
        return null;
    }

    /** Whether {@code value}, or a value inside it (an embeddable's), is null. */
    private static boolean hasNull(Type type, Object value) {
        if (value == null) {
            return true;
        }
        if (type instanceof CompositeType composite) {
            final Object[] values = composite.getPropertyValues(value);
            final Type[] types = composite.getSubtypes();
            for (int i = 0; i < values.length; i++) {
                if (hasNull(types[i], values[i])) {
                    return true;
                }
            }
        }
        return false;
    }
}
