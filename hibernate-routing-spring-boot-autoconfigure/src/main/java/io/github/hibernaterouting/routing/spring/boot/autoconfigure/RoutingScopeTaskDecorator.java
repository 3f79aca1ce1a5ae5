package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;
import org.springframework.core.task.TaskDecorator;

/**
 * Carries the submitting thread's routing scope to a task run on another thread ({@code @Async}
 * methods, tasks given to Spring Boot's task executor): the task runs in a scope with the same actor,
 * strategy and minimum position, raised to the submitting scope's last commit. So a task submitted
 * after a write reads that write, on a replica that has replayed it or on the primary.
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
        final Strategy strategy = submitting.effectiveStrategy();
        final String actor = submitting.actor();
        final ConsistencyToken minimum = submitting.minimum();
        final ConsistencyToken lastCommit = submitting.lastCommit();
        return () -> {
            try (RoutingScope scope = RoutingScope.builder()
                    .strategy(strategy)
                    .actor(actor)
                    .minimum(minimum)
                    .minimum(lastCommit)
                    .open()) {
                task.run();
            }
        };
    }
}
