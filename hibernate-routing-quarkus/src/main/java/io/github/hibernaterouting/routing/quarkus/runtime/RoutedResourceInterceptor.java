package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingScope;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.persistence.EntityManagerFactory;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.core.CurrentRequestManager;
import org.jboss.resteasy.reactive.server.core.ResteasyReactiveRequestContext;

/**
 * Runs a resource method in its request's routing scope ({@link RequestPlan}), outside any {@code @Transactional}
 * of the method (whose commit advances the actor's stamp inside the scope), on the method's thread. A mutation
 * with an actor first stores the shared marker; if it cannot be, the answer is {@code 503} with
 * {@code Retry-After: 1} and the method never runs. The scope closes when the method returns or throws; a
 * mutation's commit position goes to the response filter.
 */
@RoutedResource
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_BEFORE)
public class RoutedResourceInterceptor {
    private static final Logger LOG = Logger.getLogger(RoutedResourceInterceptor.class);
    static final String APPLIED = RoutedResourceInterceptor.class.getName() + ".applied";

    @Inject
    EntityManagerFactory entityManagerFactory;

    @AroundInvoke
    Object route(InvocationContext invocation) throws Exception {
        final ResteasyReactiveRequestContext request = CurrentRequestManager.get();
        if (request == null
                || !(request.getProperty(RequestPlan.ATTRIBUTE) instanceof RequestPlan plan)
                || request.getProperty(APPLIED) != null) {
            return invocation.proceed();
        }
        request.setProperty(APPLIED, Boolean.TRUE);
        final RoutingScope outer = RoutingScope.current();
        final RoutingScope scope = plan.open();
        try {
            if (plan.mutation() && plan.actor() != null) {
                // Inside the request's scope, so the library knows the marker is stored.
                try {
                    ReadYourWrites.beforeMutation(entityManagerFactory, plan.actor());
                } catch (ConsistencyMarkerException e) {
                    // The message names the Redis endpoint (masked); the client only learns the cause.
                    LOG.warnf("Mutation refused with 503 before its resource method ran: %s", e.getMessage());
                    throw new WebApplicationException(Response.fromResponse(RoutingRestFilters.answer(
                                    Response.Status.SERVICE_UNAVAILABLE,
                                    "Service unavailable: the consistency marker (Redis) could not be stored, so"
                                            + " this write was refused before it ran and nothing was written. Retry"
                                            + " in a second."))
                            .header("Retry-After", "1")
                            .build());
                }
            }
            try {
                return invocation.proceed();
            } finally {
                if (plan.mutation()) {
                    ReadYourWrites.mutationEnded(entityManagerFactory);
                    final ConsistencyToken commit = scope.lastCommit();
                    if (commit != null) {
                        request.setProperty(RequestPlan.COMMIT, commit);
                    }
                }
            }
        } finally {
            closeScopes(outer, scope);
        }
    }

    /** Closes the request's scope and any scope the method left open on top of it, innermost first. */
    private static void closeScopes(RoutingScope outer, RoutingScope scope) {
        for (RoutingScope current = RoutingScope.current();
                current != null && current != outer;
                current = RoutingScope.current()) {
            if (current != scope) {
                LOG.warn("Closing a RoutingScope that the resource method left open");
            }
            current.close();
        }
    }
}
