package io.github.hibernaterouting.routing.servlet.internal;

import io.github.hibernaterouting.routing.Strategy;

/**
 * How the filter routed a request, kept in a request attribute so that {@code @RoutingStrategy}
 * can tell whether it may change the strategy.
 *
 * @param strategy the request's strategy
 * @param primaryRequired the request must stay on the primary: a mutation, a header that forces
 * the primary, or a subscription; an endpoint rule does not count
 * @param cause what decided the strategy, for logs ({@code mutation}, {@code X-Force-Primary}, {@code rule}, …)
 */
public record RequestRouting(Strategy strategy, boolean primaryRequired, String cause) {
    /** The request attribute (and Jakarta REST property) that holds it. */
    public static final String ATTRIBUTE = RequestRouting.class.getName();
}
