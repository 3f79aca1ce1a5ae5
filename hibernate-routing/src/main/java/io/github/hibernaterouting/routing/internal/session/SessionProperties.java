package io.github.hibernaterouting.routing.internal.session;

import jakarta.persistence.EntityManager;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import org.hibernate.internal.SessionImpl;

/**
 * Reads one EntityManager property without copying them all.
 *
 * <p>{@code EntityManager.getProperties()} returns a fresh copy of every property, which cost
 * measurable time on each unit of work (JFR, docs/performance.md). Hibernate 7.4's {@code SessionImpl}
 * keeps the properties set on a session in a field that stays {@code null} until one is set; this
 * reads that field. If a future Hibernate renames it, the public (copying) method is used instead.
 */
final class SessionProperties {
    private static final VarHandle PROPERTIES = find();

    private SessionProperties() {}

    private static VarHandle find() {
        try {
            return MethodHandles.privateLookupIn(SessionImpl.class, MethodHandles.lookup())
                    .findVarHandle(SessionImpl.class, "properties", Map.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    static Object get(EntityManager entityManager, String name) {
        if (PROPERTIES != null && entityManager instanceof SessionImpl session) {
            final Map<?, ?> properties = (Map<?, ?>) PROPERTIES.get(session);
            // null: nothing was set on this session, and the routing property has no session-wide default.
            return properties == null ? null : properties.get(name);
        }
        return entityManager.getProperties().get(name);
    }
}
