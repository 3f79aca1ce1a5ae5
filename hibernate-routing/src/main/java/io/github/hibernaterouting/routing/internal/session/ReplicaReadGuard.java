package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.StaleReplicaReadException;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import java.util.ArrayList;
import java.util.List;
import org.hibernate.engine.spi.EntityKey;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.spi.AbstractCollectionEvent;
import org.hibernate.event.spi.InitializeCollectionEvent;
import org.hibernate.event.spi.InitializeCollectionEventListener;
import org.hibernate.event.spi.MergeContext;
import org.hibernate.event.spi.MergeEvent;
import org.hibernate.event.spi.MergeEventListener;
import org.hibernate.event.spi.PostLoadEvent;
import org.hibernate.event.spi.PostLoadEventListener;
import org.hibernate.event.spi.PreCollectionRecreateEvent;
import org.hibernate.event.spi.PreCollectionRecreateEventListener;
import org.hibernate.event.spi.PreCollectionRemoveEvent;
import org.hibernate.event.spi.PreCollectionRemoveEventListener;
import org.hibernate.event.spi.PreCollectionUpdateEvent;
import org.hibernate.event.spi.PreCollectionUpdateEventListener;
import org.hibernate.event.spi.PreDeleteEvent;
import org.hibernate.event.spi.PreDeleteEventListener;
import org.hibernate.event.spi.PreInsertEvent;
import org.hibernate.event.spi.PreInsertEventListener;
import org.hibernate.event.spi.PreUpdateEvent;
import org.hibernate.event.spi.PreUpdateEventListener;
import org.hibernate.event.spi.PreUpsertEvent;
import org.hibernate.event.spi.PreUpsertEventListener;
import org.hibernate.persister.entity.EntityPersister;
import org.hibernate.type.CollectionType;
import org.hibernate.type.Type;

/**
 * Flush-time guard: moves a session to the primary before its first entity write, refuses writes
 * under {@code REPLICA}, and stops a stale replica read from turning into a lost update.
 *
 * <p>Entities without {@code @Version} that a session loaded from a replica are remembered. Before
 * such an entity is updated or deleted, its loaded state is compared with the row on the primary,
 * inside the same transaction and whatever the strategy ({@link SessionRouting#onPrimary}); if they
 * differ the flush fails with {@link StaleReplicaReadException} instead of overwriting newer data.
 * Versioned entities need no help: their version check runs on the primary and fails with
 * {@code OptimisticLockException}. The collections of unversioned owners get the same check before
 * they are written ({@link ReplicaCollections}); the guard learns which ones were read from a
 * replica when Hibernate initializes them, or loads them with their owner. A {@code StatelessSession}
 * gives the guard no loaded state: see {@link #refuseStatelessAfterReplicaRead}.
 */
public final class ReplicaReadGuard
        implements PostLoadEventListener,
                PreInsertEventListener,
                PreUpdateEventListener,
                PreDeleteEventListener,
                PreUpsertEventListener,
                PreCollectionRecreateEventListener,
                PreCollectionUpdateEventListener,
                PreCollectionRemoveEventListener,
                InitializeCollectionEventListener,
                MergeEventListener {
    private static final long serialVersionUID = 1L;

    private final WritePolicy writes;
    private final transient DetachedReads detached = new DetachedReads();

    public ReplicaReadGuard(WritePolicy writes) {
        this.writes = writes;
    }

    private static SessionRouting unit(SharedSessionContractImplementor session) {
        return SessionRouting.of(session);
    }

    @Override
    public void onPostLoad(PostLoadEvent event) {
        final SessionRouting unit = SessionRouting.readingReplica(event.getSession());
        final EntityPersister persister = event.getPersister();
        if (unit == null) {
            if (!persister.isVersioned()) {
                detached.loadedFromPrimary(event.getEntity());
            }
            return;
        }
        if (!persister.isVersioned()) {
            unit.loadedFromReplica(event.getSession().generateEntityKey(event.getId(), persister));
            detached.loadedFromReplica(event.getEntity(), persister, event.getSession());
        }
        ReplicaCollections.ownerLoaded(unit, event.getEntity(), persister, event.getSession());
    }

    /** Appended after Hibernate's own listener: the collection has just been initialized. */
    @Override
    public void onInitializeCollection(InitializeCollectionEvent event) {
        ReplicaCollections.initialized(event.getCollection(), event.getSession());
    }

    /**
     * Appended after Hibernate's own listener, which loaded the current row and copied the detached
     * state over it: a detached instance read on a replica in an earlier unit of work is compared
     * with the primary now, before anything is flushed (a merge whose copy ends up unchanged writes
     * nothing, and the change it carried would be lost without a word).
     */
    @Override
    public void onMerge(MergeEvent event) {
        verifyMerge(event);
    }

    @Override
    public void onMerge(MergeEvent event, MergeContext copiedAlready) {
        verifyMerge(event);
    }

    private void verifyMerge(MergeEvent event) {
        final Object[] read = detached.readOfMergedOriginal(event);
        if (read == null) {
            return;
        }
        final SharedSessionContractImplementor session = event.getSession();
        // A routed connection, so that the unit's state exists (the merge may have loaded from a cache).
        session.getJdbcCoordinator().getLogicalConnection().getPhysicalConnection();
        final SessionRouting unit = SessionRouting.of(session);
        if (unit == null || unit.strategy(null) == Strategy.REPLICA) {
            // Under REPLICA nothing may reach the primary, and the write the merge prepares is refused anyway.
            return;
        }
        final Object managed = event.getResult();
        final EntityPersister persister = session.getEntityPersister(event.getEntityName(), managed);
        final Object id = persister.getIdentifier(managed, session);
        final Object[] current = unit.onPrimary(() -> DetachedReads.onThePrimary(persister, id, session));
        final String changed = current == null ? null : DetachedReads.changed(persister, read, current, session);
        if (current == null || !changed.isEmpty()) {
            throw StaleReplicaReadException.merged(
                    persister.getEntityName(), id, current == null ? "was deleted" : "changed (" + changed + ")");
        }
        detached.current(event.getOriginal());
        detached.current(managed);
    }

    @Override
    public boolean onPreInsert(PreInsertEvent event) {
        beforeWrite(event.getSession(), "insert " + event.getPersister().getEntityName());
        return false;
    }

    @Override
    public boolean onPreUpsert(PreUpsertEvent event) {
        final SessionRouting unit =
                beforeWrite(event.getSession(), "upsert " + event.getPersister().getEntityName());
        refuseStatelessAfterReplicaRead(unit, event.getSession(), event.getPersister(), event.getId(), "upsert");
        return false;
    }

    @Override
    public boolean onPreUpdate(PreUpdateEvent event) {
        final SessionRouting unit =
                beforeWrite(event.getSession(), "update " + event.getPersister().getEntityName());
        refuseStatelessAfterReplicaRead(unit, event.getSession(), event.getPersister(), event.getId(), "update");
        verify(
                unit,
                event.getSession(),
                event.getPersister(),
                event.getId(),
                event.getEntity(),
                event.getOldState(),
                "changed");
        return false;
    }

    @Override
    public boolean onPreDelete(PreDeleteEvent event) {
        final SessionRouting unit =
                beforeWrite(event.getSession(), "delete " + event.getPersister().getEntityName());
        refuseStatelessAfterReplicaRead(unit, event.getSession(), event.getPersister(), event.getId(), "delete");
        verify(
                unit,
                event.getSession(),
                event.getPersister(),
                event.getId(),
                event.getEntity(),
                event.getDeletedState(),
                "changed");
        return false;
    }

    @Override
    public void onPreRecreateCollection(PreCollectionRecreateEvent event) {
        beforeCollectionWrite(event);
    }

    @Override
    public void onPreUpdateCollection(PreCollectionUpdateEvent event) {
        beforeCollectionWrite(event);
    }

    @Override
    public void onPreRemoveCollection(PreCollectionRemoveEvent event) {
        beforeCollectionWrite(event);
    }

    private void beforeCollectionWrite(AbstractCollectionEvent event) {
        // The collection's role, not event.getCollectionPersister(), which Hibernate ORM 7.2 lacks.
        final String role = event.getCollection().getRole();
        final SessionRouting unit = beforeWrite(
                event.getSession(),
                "change collection " + (role != null ? role : "of " + event.getAffectedOwnerEntityName()));
        ReplicaCollections.verify(unit, event);
    }

    /** Refuses the write under REPLICA; otherwise moves the session to the primary before its SQL is built. */
    private SessionRouting beforeWrite(SharedSessionContractImplementor session, String what) {
        final SessionRouting unit = unit(session);
        if (unit != null) {
            writes.beforeWrite(unit, unit.strategy(null), RouteReason.WRITE, what);
        }
        return unit;
    }

    /**
     * A stateless session fires no load event and hands over no old state, so {@link #verify} has
     * nothing to compare: an unversioned entity is refused if the unit ran a replica statement that
     * may have read its tables or those of its collections ({@link StatelessReads}), or another
     * stateless session of the same routing scope did ({@link StatelessScopeReads}).
     */
    private static void refuseStatelessAfterReplicaRead(
            SessionRouting unit,
            SharedSessionContractImplementor session,
            EntityPersister persister,
            Object id,
            String operation) {
        if (unit == null || !unit.stateless() || persister.isVersioned()) {
            return;
        }
        final List<String> tables = new ArrayList<>(List.of(persister.getTableNames()));
        for (Type type : persister.getPropertyTypes()) {
            if (type instanceof CollectionType collection) {
                tables.add(session.getFactory()
                        .getMappingMetamodel()
                        .getCollectionDescriptor(collection.getRole())
                        .getTableName());
            }
        }
        final String table = unit.statelessReads().readOne(tables);
        if (table != null) {
            throw StaleReplicaReadException.unverifiable(persister.getEntityName(), id, operation, table);
        }
        // Read by one stateless session, written through another (one per request and one per
        // transaction, as frameworks inject them): what the scope they share read counts too.
        final String readInScope = unit.statelessReads().scopeReadOne(tables);
        if (readInScope != null) {
            throw StaleReplicaReadException.unverifiableInScope(persister.getEntityName(), id, operation, readInScope);
        }
    }

    private void verify(
            SessionRouting unit,
            SharedSessionContractImplementor session,
            EntityPersister persister,
            Object id,
            Object entity,
            Object[] loadedState,
            String what) {
        if (unit == null || persister.isVersioned()) {
            return;
        }
        final EntityKey key = session.generateEntityKey(id, persister);
        if (loadedState == null || !unit.wasLoadedFromReplica(key)) {
            return;
        }
        // From the primary, in this transaction, whatever the strategy: under STALE_READ the unit's
        // reads would otherwise stay on the replica it read the entity from.
        final Object[] current = unit.onPrimary(() -> DetachedReads.onThePrimary(persister, id, session));
        if (current == null) {
            throw new StaleReplicaReadException(persister.getEntityName(), id, "was deleted");
        }
        final String changed =
                DetachedReads.changed(persister, DetachedReads.kept(persister, loadedState, session), current, session);
        if (!changed.isEmpty()) {
            throw new StaleReplicaReadException(persister.getEntityName(), id, what + " (" + changed + ")");
        }
        unit.verified(key);
        detached.current(entity);
    }
}
