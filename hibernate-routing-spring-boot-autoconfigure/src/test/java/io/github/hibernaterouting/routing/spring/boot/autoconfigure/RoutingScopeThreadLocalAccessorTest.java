package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;
import io.micrometer.context.ContextSnapshotFactory;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Micrometer's context propagation carries the routing scope to another thread, found through the service file. */
class RoutingScopeThreadLocalAccessorTest {
    private final ContextSnapshotFactory snapshots =
            ContextSnapshotFactory.builder().build();

    @Test
    void aSnapshotCarriesTheScopeToAnotherThread_andClosingItLeavesThatThreadAsItWas() throws Exception {
        final AtomicReference<String> actorThere = new AtomicReference<>();
        final AtomicReference<Strategy> strategyThere = new AtomicReference<>();
        final AtomicReference<Strategy> floorThere = new AtomicReference<>();
        final AtomicReference<Object> afterwards = new AtomicReference<>("not run");
        final Runnable task;
        try (RoutingScope ignored = RoutingScope.builder()
                .actor("alice")
                .strategy(Strategy.STALE_READ)
                .floor(Strategy.PRIMARY)
                .open()) {
            task = snapshots.captureAll().wrap(() -> {
                floorThere.set(RoutingScope.current().floor());
                actorThere.set(RoutingScope.current().actor());
                strategyThere.set(RoutingScope.current().effectiveStrategy());
            });
        }
        final Thread other = new Thread(() -> {
            task.run();
            afterwards.set(RoutingScope.current());
        });
        other.start();
        other.join();

        assertThat(actorThere.get()).isEqualTo("alice");
        assertThat(strategyThere.get()).isEqualTo(Strategy.STALE_READ);
        assertThat(floorThere.get())
                .as("a floor no level of the task may weaken")
                .isEqualTo(Strategy.PRIMARY);
        assertThat(afterwards.get())
                .as("the scope the snapshot opened is closed")
                .isNull();
    }

    @Test
    void aSnapshotWithoutAScope_leavesTheOtherThreadsOwnScopeAlone() throws Exception {
        final Runnable task = snapshots.captureAll().wrap(() -> {});
        final AtomicReference<String> actorAfter = new AtomicReference<>();
        final Thread other = new Thread(() -> {
            try (RoutingScope own = RoutingScope.builder().actor("bob").open()) {
                task.run();
                actorAfter.set(RoutingScope.current().actor());
            }
        });
        other.start();
        other.join();

        assertThat(actorAfter.get()).isEqualTo("bob");
    }
}
