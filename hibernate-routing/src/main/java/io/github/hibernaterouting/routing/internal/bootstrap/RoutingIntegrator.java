package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.internal.session.ReplicaReadGuard;
import org.hibernate.boot.Metadata;
import org.hibernate.boot.spi.BootstrapContext;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.service.spi.EventListenerRegistry;
import org.hibernate.event.spi.EventType;
import org.hibernate.integrator.spi.Integrator;

/**
 * Registers the {@link ReplicaReadGuard} event listeners when routing is on.
 *
 * <p>Found by Hibernate through {@code META-INF/services/org.hibernate.integrator.spi.Integrator}.
 */
public final class RoutingIntegrator implements Integrator {
    @Override
    public void integrate(
            Metadata metadata, BootstrapContext bootstrapContext, SessionFactoryImplementor sessionFactory) {
        final MultiTenantConnectionProvider<?> provider =
                sessionFactory.getServiceRegistry().getService(MultiTenantConnectionProvider.class);
        if (!(provider instanceof RoutingConnectionProvider routing) || routing.runtime() == null) {
            return;
        }
        final ReplicaReadGuard guard = routing.runtime().guard();
        final EventListenerRegistry listeners = sessionFactory.getEventListenerRegistry();
        listeners.appendListeners(EventType.POST_LOAD, guard);
        listeners.appendListeners(EventType.PRE_INSERT, guard);
        listeners.appendListeners(EventType.PRE_UPSERT, guard);
        listeners.appendListeners(EventType.PRE_UPDATE, guard);
        listeners.appendListeners(EventType.PRE_DELETE, guard);
        listeners.appendListeners(EventType.PRE_COLLECTION_RECREATE, guard);
        listeners.appendListeners(EventType.PRE_COLLECTION_UPDATE, guard);
        listeners.appendListeners(EventType.PRE_COLLECTION_REMOVE, guard);
    }
}
