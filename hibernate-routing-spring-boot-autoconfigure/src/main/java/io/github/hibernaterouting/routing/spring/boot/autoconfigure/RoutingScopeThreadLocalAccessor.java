package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingScope;
import io.micrometer.context.ThreadLocalAccessor;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The routing scope as a thread-local of Micrometer's context propagation, which Spring uses to carry
 * context to other threads (a {@code ContextSnapshot} captured on one thread and restored on another:
 * {@code ContextPropagatingTaskDecorator}, Reactor's automatic context propagation, instrumented
 * listeners). On the other thread the work runs in a scope with what {@link RoutingScope#carry()}
 * captured (actor, strategy, minimum raised to the last commit, freshness floors), as with
 * {@link RoutingScopeTaskDecorator}; when the snapshot is closed, that scope closes and the thread is
 * as it was. Registered through {@code META-INF/services} when {@code io.micrometer:context-propagation}
 * is on the class path.
 *
 * <p>What is carried is what the scope knew when the snapshot was captured.
 */
public final class RoutingScopeThreadLocalAccessor implements ThreadLocalAccessor<RoutingScope.Carried> {
    /** The key of the routing scope in a context snapshot. */
    public static final String KEY = "hibernate-routing.scope";

    /** Per thread: what each {@code setValue} did, so that each restore undoes exactly that. */
    private static final ThreadLocal<Deque<Optional<RoutingScope>>> OPENED = ThreadLocal.withInitial(ArrayDeque::new);

    @Override
    public Object key() {
        return KEY;
    }

    @Override
    public RoutingScope.Carried getValue() {
        final RoutingScope scope = RoutingScope.current();
        return scope == null ? null : scope.carry();
    }

    @Override
    public void setValue(RoutingScope.Carried value) {
        OPENED.get().push(Optional.of(value.open()));
    }

    /** The snapshot had no scope: the thread keeps whatever scope it has (one cannot be taken away). */
    @Override
    public void setValue() {
        OPENED.get().push(Optional.empty());
    }

    @Override
    public void restore(RoutingScope.Carried previousValue) {
        undoLast();
    }

    @Override
    public void restore() {
        undoLast();
    }

    private static void undoLast() {
        final Deque<Optional<RoutingScope>> opened = OPENED.get();
        if (!opened.isEmpty()) {
            opened.pop().ifPresent(RoutingScope::close);
        }
        if (opened.isEmpty()) {
            OPENED.remove();
        }
    }
}
