package io.github.hibernaterouting.routing.servlet.spi;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Objects;

/**
 * Finds the actor of a request, after the application's authentication ran.
 *
 * <p>Configure one with the filter's init-param {@code actor-resolver} (a class name with a public
 * no-argument constructor) or programmatically. The default, {@link #userPrincipal()}, takes the
 * container's authenticated principal. Implementations must be thread-safe and fast: they run once
 * per request, before the handler. An exception thrown here fails the request (500); it is not
 * taken as "no actor".
 */
@FunctionalInterface
public interface ActorResolver {
    /**
     * The actor of {@code request}, or {@code null} if the request has none (it is then routed by
     * its method only, without a stamp or a Redis marker).
     */
    Actor resolve(HttpServletRequest request);

    /** The default: {@code request.getUserPrincipal().getName()}, without a stamp. */
    static ActorResolver userPrincipal() {
        return request -> {
            final Principal principal = request.getUserPrincipal();
            return principal == null ? null : Actor.of(principal.getName());
        };
    }

    /**
     * An {@link Actor} the application's authentication stored in a request attribute, typically
     * with the stamp column it loaded together with the user row.
     *
     * @throws IllegalStateException at request time if the attribute holds something else than an {@code Actor}
     */
    static ActorResolver requestAttribute(String name) {
        Objects.requireNonNull(name, "name");
        return request -> {
            final Object value = request.getAttribute(name);
            if (value == null || value instanceof Actor) {
                return (Actor) value;
            }
            throw new IllegalStateException("Request attribute '" + name + "' must hold an " + Actor.class.getName()
                    + ", but holds a " + value.getClass().getName());
        };
    }
}
