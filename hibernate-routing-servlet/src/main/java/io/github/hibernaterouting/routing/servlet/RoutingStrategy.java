package io.github.hibernaterouting.routing.servlet;

import io.github.hibernaterouting.routing.Strategy;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The routing strategy of a Jakarta REST resource method, or of every method of a resource class
 * (an annotation on the method wins over one on the class).
 *
 * <p>{@link RoutingStrategyFeature} applies it: it opens a {@link io.github.hibernaterouting.routing.RoutingScope}
 * with this strategy around the resource method, nested in the request's scope, so the request's
 * actor and minimum position still apply. It never weakens a request that must use the primary:
 * mutations ({@code POST}, {@code PUT}, {@code PATCH}, {@code DELETE}), and requests whose headers
 * force the primary or that are subscriptions, keep {@link Strategy#PRIMARY}.
 *
 * <pre>{@code
 * @GET
 * @Path("{id}/balance")
 * @RoutingStrategy(Strategy.PRIMARY)
 * public Balance balance(@PathParam("id") long id) { ... }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface RoutingStrategy {
    /** The strategy for the resource method's unit of work. */
    Strategy value();
}
