package io.github.hibernaterouting.routing.internal.bootstrap;

import java.util.ServiceLoader;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.monitor.internal.EmptyEventMonitor;
import org.hibernate.event.monitor.spi.DiagnosticEvent;
import org.hibernate.event.monitor.spi.EventMonitor;

/**
 * Tells each routed connection which Hibernate session acquired it ({@link SessionBinding}).
 *
 * <p>Hibernate reports every completed connection acquisition, with the session, to its
 * {@link EventMonitor}: the only place where a new connection and its session meet. The library
 * registers this monitor through {@code META-INF/services}. Hibernate uses one event monitor per
 * session factory, so every event is passed on to another monitor on the class path (for example
 * {@code hibernate-jfr}'s), if there is one, and installing the library does not switch
 * diagnostics off.
 */
public final class RoutingEventMonitor extends ForwardingEventMonitor {
    public RoutingEventMonitor() {
        super(otherMonitor());
    }

    private static EventMonitor otherMonitor() {
        // Filter by type before instantiating: loading this class again would recurse.
        return ServiceLoader.load(EventMonitor.class, RoutingEventMonitor.class.getClassLoader()).stream()
                .filter(provider -> provider.type() != RoutingEventMonitor.class)
                .findFirst()
                .<EventMonitor>map(ServiceLoader.Provider::get)
                .orElseGet(EmptyEventMonitor::new);
    }

    @Override
    public void completeJdbcConnectionAcquisitionEvent(
            DiagnosticEvent jdbcConnectionAcquisitionEvent, SharedSessionContractImplementor session, Object tenantId) {
        SessionBinding.acquired(session);
        super.completeJdbcConnectionAcquisitionEvent(jdbcConnectionAcquisitionEvent, session, tenantId);
    }
}
