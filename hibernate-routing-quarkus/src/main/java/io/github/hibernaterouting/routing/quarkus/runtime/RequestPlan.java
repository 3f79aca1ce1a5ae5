package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;

/**
 * How a request is routed, decided by {@link RoutingRestFilters} from its method, headers and actor, and applied
 * around the resource method by {@link RoutedResourceInterceptor}.
 *
 * @param strategy the request scope's strategy
 * @param primaryFloor whether the client asked for the primary ({@code X-Force-Primary: true}, {@code Consistency:
 *     strong}): no hint, annotation or nested scope may weaken it
 * @param token the client's {@code X-Consistency-Token}, a position every read must reflect, or {@code null}
 * @param actor the actor's key, or {@code null}
 * @param mutation whether the request is a mutation (a method that is not safe)
 * @param cause why the strategy, for the log
 */
record RequestPlan(
        Strategy strategy, boolean primaryFloor, ConsistencyToken token, String actor, boolean mutation, String cause) {
    /** The request attribute that holds the plan, then the commit position of a mutation. */
    static final String ATTRIBUTE = RequestPlan.class.getName();

    static final String COMMIT = RequestPlan.class.getName() + ".commit";

    RoutingScope open() {
        return RoutingScope.builder()
                .strategy(strategy)
                .floor(primaryFloor ? Strategy.PRIMARY : null)
                .floor(token)
                .actor(actor)
                .open();
    }
}
