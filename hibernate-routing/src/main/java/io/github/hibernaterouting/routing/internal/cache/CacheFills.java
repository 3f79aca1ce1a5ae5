package io.github.hibernaterouting.routing.internal.cache;

import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import org.hibernate.cache.MutableCacheKeyBuilder;
import org.hibernate.cache.internal.NaturalIdCacheKey;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;

/**
 * The two rules that keep Hibernate's caches one consistent view whichever server a session uses:
 * what may fill a cache, and keys without the connection identifier.
 *
 * <p><b>Fills.</b> Data read on a replica may be older than what the cache had (an entry evicted by a
 * write, or expired, is then put back with the state from before the write), and would be served to
 * every later reader, on the primary too, long after the replica caught up. So a load or a query
 * fills a cache only when the statements it read from ran on the primary. Hibernate puts what a
 * statement loaded into the caches before it closes that statement, so the routed connection can
 * tell: no statement that ran on a replica may still be open, and the last statement must have run
 * on the primary.
 */
final class CacheFills {
    private CacheFills() {}

    /**
     * Whether what {@code session} is loading right now may go into a cache: the data came from the
     * primary, or from no statement at all (the cache itself).
     */
    static boolean fromPrimary(SharedSessionContractImplementor session) {
        if (session == null) {
            return false;
        }
        final var logicalConnection = session.getJdbcCoordinator().getLogicalConnection();
        if (!logicalConnection.isPhysicallyConnected()) {
            // No statement of the session is open: what it puts comes from the cache, not a server.
            return true;
        }
        // Anything else than a routed connection (one the application handed to the session) is a
        // server the library cannot vouch for.
        return logicalConnection.getPhysicalConnection() instanceof SessionRouting.Routed routed
                && !routed.mayBeReadingReplicaData();
    }

    /**
     * A cache served {@code session} an entry. Entries come from the primary (or from writes), so the
     * entry may be newer than what a replica has replayed: the session's later replica reads must be at
     * least as far along as the primary is now, or its reads could go back in time
     * ({@link SessionRouting#readFromCache()}). A session with no routed connection yet gets one, which
     * borrows nothing until a statement runs, so that its routing state exists to be told.
     */
    static void served(SharedSessionContractImplementor session) {
        if (session == null || session.isClosed()) {
            return;
        }
        SessionRouting unit = SessionRouting.of(session);
        if (unit == null) {
            session.getJdbcCoordinator().getLogicalConnection().getPhysicalConnection();
            unit = SessionRouting.of(session);
        }
        if (unit != null) {
            unit.readFromCache();
        }
    }

    /**
     * The natural-id cache key Hibernate builds for a session without a tenant identifier (it mixes
     * the session's identifier into the key otherwise): the same key for {@code "primary"} and
     * {@code "replica"} sessions, and for Hibernate's own tenant-less calls.
     */
    static Object naturalIdKey(
            Object naturalIdValues, EntityPersister persister, SharedSessionContractImplementor session) {
        final var naturalIds = persister.getNaturalIdMapping();
        final NaturalIdKeyBuilder builder =
                new NaturalIdKeyBuilder(persister.getRootEntityName(), naturalIds.getJdbcTypeCount());
        // Hibernate adds the tenant's hash first; 0 for none.
        builder.addHashCode(0);
        naturalIds.addToCacheKey(builder, naturalIdValues, session);
        return builder.build();
    }

    /** As Hibernate's own natural-id key builder, with no tenant identifier. */
    private static final class NaturalIdKeyBuilder implements MutableCacheKeyBuilder {
        private static final long serialVersionUID = 1L;

        private final String entityName;
        private final transient Object[] values;
        private int index;
        private int hashCode;

        NaturalIdKeyBuilder(String entityName, int size) {
            this.entityName = entityName;
            this.values = new Object[size];
        }

        @Override
        public void addValue(Object value) {
            values[index++] = value;
        }

        @Override
        public void addHashCode(int hash) {
            hashCode = 37 * hashCode + hash;
        }

        @Override
        public NaturalIdCacheKey build() {
            return new NaturalIdCacheKey(values, entityName, null, hashCode);
        }
    }
}
