package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.servlet.spi.Actor;
import io.github.hibernaterouting.routing.servlet.spi.ActorResolver;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

/**
 * The actor of a request is the user Spring Security authenticated: {@link Authentication#getName()}
 * of the security context, which the filter chain has filled in by the time the read-your-writes
 * filter runs. Anonymous requests have no actor. Declare an {@link ActorResolver} bean to use
 * something else (an API key, a tenant).
 */
public final class SecurityContextActorResolver implements ActorResolver {
    @Override
    public Actor resolve(HttpServletRequest request) {
        final Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
        if (authentication == null
                || !authentication.isAuthenticated()
                || authentication instanceof AnonymousAuthenticationToken
                || authentication.getName() == null
                || authentication.getName().isBlank()) {
            return null;
        }
        return Actor.of(authentication.getName());
    }
}
