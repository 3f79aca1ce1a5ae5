package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.RoutingScope;
import java.util.Map;
import org.eclipse.microprofile.context.spi.ThreadContextController;
import org.eclipse.microprofile.context.spi.ThreadContextProvider;
import org.eclipse.microprofile.context.spi.ThreadContextSnapshot;

/**
 * The routing scope as a context of MicroProfile Context Propagation, which Quarkus uses to carry context to
 * {@code ManagedExecutor}s, {@code @Asynchronous} methods and reactive continuations: the work runs in a scope with
 * what {@link RoutingScope#carry()} captured (actor, strategy, minimum raised to the last commit, freshness
 * floors), closed when the work ends. What is carried is what the scope knew when the context was captured.
 * Registered through {@code META-INF/services}.
 */
public final class RoutingScopeContextProvider implements ThreadContextProvider {
    /** The context type, for {@code ManagedExecutor.builder().propagated(...)} and {@code cleared(...)}. */
    public static final String TYPE = "hibernate-routing";

    @Override
    public ThreadContextSnapshot currentContext(Map<String, String> props) {
        final RoutingScope scope = RoutingScope.current();
        final RoutingScope.Carried carried = scope == null ? null : scope.carry();
        return () -> {
            final RoutingScope opened = carried == null ? null : carried.open();
            return restore(opened);
        };
    }

    /** A cleared context cannot take away a scope the thread has; it adds none. */
    @Override
    public ThreadContextSnapshot clearedContext(Map<String, String> props) {
        return () -> restore(null);
    }

    private static ThreadContextController restore(RoutingScope opened) {
        return () -> {
            if (opened != null) {
                opened.close();
            }
        };
    }

    @Override
    public String getThreadContextType() {
        return TYPE;
    }
}
