package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.internal.jdbc.JdbcRouting;
import io.github.hibernaterouting.routing.internal.jdbc.RoutingConnection;
import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import org.hibernate.SessionEventListener;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

/**
 * The whole protocol that binds each routed connection to the routing state of the session that
 * acquired it, and the one owner of the thread-local it needs.
 *
 * <p>{@code MultiTenantConnectionProvider.getConnection} is not told the session. Two Hibernate
 * callbacks tell it around that call, on the same thread and before the connection runs anything:
 * <ol>
 * <li>A session's first connection: Hibernate reports the completed acquisition, with the session,
 * to its event monitor ({@link #acquired}). The provider parked the connection ({@link #bind}); the
 * monitor creates the session's routing state, attaches the connection to it, and adds a listener
 * to the session.</li>
 * <li>Every later connection: that listener announces the session's routing state when Hibernate
 * starts acquiring ({@link Announcer}), so {@link #bind} attaches the new connection at once.</li>
 * </ol>
 */
final class SessionBinding {
    /** What the current thread is in the middle of: a session announced, or a connection waiting for its session. */
    private static final class Slot {
        SessionRouting announced;
        JdbcRouting announcedBy;
        RoutingConnection parked;
    }

    private static final ThreadLocal<Slot> SLOT = ThreadLocal.withInitial(Slot::new);

    private SessionBinding() {}

    /** From the provider: binds {@code connection} to the announced session's state, or parks it until the monitor names its session. */
    static RoutingConnection bind(RoutingConnection connection, JdbcRouting routing) {
        final Slot slot = SLOT.get();
        if (slot.announced != null && slot.announcedBy == routing) {
            connection.attach(slot.announced);
        } else {
            slot.parked = connection;
        }
        return connection;
    }

    /** From the event monitor: the acquisition for {@code session} completed; attach the parked connection, if any. */
    static void acquired(SharedSessionContractImplementor session) {
        final Slot slot = SLOT.get();
        final RoutingConnection connection = slot.parked;
        if (connection == null) {
            return;
        }
        slot.parked = null;
        if (session != null) {
            final JdbcRouting routing = connection.routing();
            final SessionRouting unit = routing.newSessionRouting(session);
            session.getEventListenerManager().addListener(new Announcer(unit, routing));
            connection.attach(unit);
        }
    }

    /** Added to a session after its first routed connection: announces its routing state at every later acquisition. */
    private static final class Announcer implements SessionEventListener {
        private static final long serialVersionUID = 1L;

        private final transient SessionRouting unit;
        private final transient JdbcRouting routing;

        Announcer(SessionRouting unit, JdbcRouting routing) {
            this.unit = unit;
            this.routing = routing;
        }

        @Override
        public void jdbcConnectionAcquisitionStart() {
            final Slot slot = SLOT.get();
            slot.announced = unit;
            slot.announcedBy = routing;
        }

        @Override
        public void jdbcConnectionAcquisitionEnd() {
            final Slot slot = SLOT.get();
            slot.announced = null;
            slot.announcedBy = null;
        }
    }
}
