package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.routing.servlet.spi.Actor;
import io.github.hibernaterouting.routing.servlet.spi.ActorResolver;
import jakarta.servlet.http.HttpServletRequest;

/**
 * The routing actor of a request: the authenticated user's id, with the stamp that
 * {@link AuthenticationFilter} loaded from the primary in the same query as the user.
 *
 * <p>Configured as the routing filter's {@code actor-resolver} init-param in {@code web.xml}.
 * Stateless and thread-safe.
 */
public class SampleActorResolver implements ActorResolver {
    @Override
    public Actor resolve(HttpServletRequest request) {
        return request.getUserPrincipal() instanceof AuthenticatedUser user
                ? new Actor(user.actorKey(), user.stamp())
                : null;
    }
}
