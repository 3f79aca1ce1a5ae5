package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingScope;
import org.springframework.core.task.TaskDecorator;

/**
 * Carries the submitting thread's routing scope to a task run on another thread ({@code @Async}
 * methods, tasks given to Spring Boot's task executor): the task runs in a scope with the same actor,
 * strategy and minimum position, raised to the submitting scope's last commit, and the same freshness
 * floors ({@code X-Force-Primary}, {@code Consistency: strong}, a client's token): see
 * {@link RoutingScope#carry()}. So a task submitted after a write reads that write, on a replica that
 * has replayed it or on the primary.
 *
 * <p>What is carried is what the scope knew at submission: a write committed after the task was
 * submitted is not covered (submit after the commit, for example from a
 * {@code @TransactionalEventListener(phase = AFTER_COMMIT)}). Without a scope the task runs as submitted.
 */
public final class RoutingScopeTaskDecorator implements TaskDecorator {
    @Override
    public Runnable decorate(Runnable task) {
        final RoutingScope submitting = RoutingScope.current();
        if (submitting == null) {
            return task;
        }
        final RoutingScope.Carried carried = submitting.carry();
        return () -> {
            try (RoutingScope scope = carried.open()) {
                task.run();
            }
        };
    }
}
