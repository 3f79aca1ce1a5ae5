package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.InvalidConsistencyTokenException;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import io.github.hibernaterouting.routing.servlet.internal.EndpointRules;
import io.github.hibernaterouting.routing.servlet.internal.RoutingHeaders;
import io.github.hibernaterouting.routing.servlet.internal.RoutingHeaders.InvalidHeaderException;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManagerFactory;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Response;
import java.lang.reflect.Method;
import java.security.Principal;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.hibernate.JDBCException;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * The request level of routing for Quarkus REST, with the headers and answers of the library's servlet filter.
 *
 * <p>The request filter runs after authentication, on the thread of the resource method. It refuses a bad
 * {@code X-Force-Primary}, {@code Consistency} or {@code X-Consistency-Token} header with {@code 400} (naming the
 * header and the fix), a token ahead of the primary with {@code 400}, and, with
 * {@code quarkus.hibernate-routing.web.require-actor}, a request without a user with {@code 401}. It decides the
 * request's {@link RequestPlan}: mutations ({@code POST}, {@code PUT}, {@code PATCH}, {@code DELETE}) and requests
 * that ask for the primary or subscribe ({@code text/event-stream}, WebSocket upgrades) run {@link Strategy#PRIMARY};
 * other requests {@link Strategy#READ_AFTER_WRITE}, or what an endpoint rule or {@link RoutingStrategy} on the
 * resource method or class says (the annotation wins). The actor is the authenticated user's name.
 * {@link RoutedResourceInterceptor} applies the plan around the resource method. The response filter echoes
 * {@code X-Request-Id} and gives a mutation's commit position in {@code X-Consistency-Token}.
 */
public class RoutingRestFilters {
    private static final Logger LOG = Logger.getLogger(RoutingRestFilters.class);
    static final String MDC_REQUEST_ID = "requestId";
    private static final String REQUEST_ID = RoutingRestFilters.class.getName() + ".requestId";

    @Inject
    HibernateRoutingConfig config;

    @Inject
    EntityManagerFactory entityManagerFactory;

    private volatile EndpointRules rules;
    private final Set<Method> unrouted = ConcurrentHashMap.newKeySet();

    @ServerRequestFilter
    public Response route(ContainerRequestContext request, ResourceInfo resource) {
        if (!config.web().enabled() || RoutedUnit.provider() == null) {
            return null;
        }
        final String requestId = RoutingHeaders.requestId(request.getHeaderString(RoutingHeaders.REQUEST_ID));
        request.setProperty(REQUEST_ID, requestId);
        MDC.put(MDC_REQUEST_ID, requestId);
        final String method = request.getMethod();
        final boolean mutation = !EndpointRules.SAFE_METHODS.contains(method);
        final boolean forcePrimary;
        final boolean strong;
        final ConsistencyToken token;
        try {
            forcePrimary = RoutingHeaders.forcePrimary(values(request, RoutingHeaders.FORCE_PRIMARY));
            strong = RoutingHeaders.strongConsistency(values(request, RoutingHeaders.CONSISTENCY));
            token = RoutingHeaders.minimum(values(request, RoutingHeaders.CONSISTENCY_TOKEN));
        } catch (InvalidHeaderException e) {
            LOG.debugf("Invalid %s header: 400", e.header());
            return answer(Response.Status.BAD_REQUEST, e.getMessage());
        }
        final Principal user = request.getSecurityContext() == null
                ? null
                : request.getSecurityContext().getUserPrincipal();
        final String actor =
                user == null || user.getName() == null || user.getName().isBlank() ? null : user.getName();
        if (actor == null && config.web().requireActor()) {
            return answer(
                    Response.Status.UNAUTHORIZED, "Authentication required: this request has no authenticated user.");
        }
        try {
            ReadYourWrites.checkToken(entityManagerFactory, token);
        } catch (InvalidConsistencyTokenException e) {
            LOG.debug("Consistency token ahead of the primary: 400");
            return answer(
                    Response.Status.BAD_REQUEST,
                    RoutingHeaders.refusedToken(token.toString(), e.reason()).getMessage());
        } catch (JDBCException e) {
            LOG.warnf("Could not check a %s against the primary: %s", RoutingHeaders.CONSISTENCY_TOKEN, e.getMessage());
            return Response.fromResponse(answer(
                            Response.Status.SERVICE_UNAVAILABLE,
                            "Service unavailable: the " + RoutingHeaders.CONSISTENCY_TOKEN
                                    + " could not be checked against the primary. Retry in a second."))
                    .header("Retry-After", "1")
                    .build();
        }
        final RequestPlan plan =
                plan(request, resource, method, mutation, forcePrimary || strong, forcePrimary, token, actor);
        request.setProperty(RequestPlan.ATTRIBUTE, plan);
        LOG.debugf(
                "%s routed %s (%s)%s", method, plan.strategy(), plan.cause(), actor == null ? " without an actor" : "");
        return null;
    }

    @ServerResponseFilter
    public void answer(ContainerRequestContext request, ContainerResponseContext response, ResourceInfo resource) {
        if (request.getProperty(RequestPlan.ATTRIBUTE) instanceof RequestPlan
                && request.getProperty(RoutedResourceInterceptor.APPLIED) == null
                && response.getStatus() < 400
                && resource != null
                && resource.getResourceMethod() != null
                && unrouted.add(resource.getResourceMethod())) {
            // Once per resource method: a resource the interceptor does not reach (not a CDI bean, a class the build
            // did not
            // see as a resource) runs without the request's scope, so without read-your-writes.
            LOG.warnf(
                    "The request %s %s was answered outside the request's routing scope: its resource method was not"
                            + " intercepted (is the resource a CDI bean with @Path on its class?). Its reads had no actor",
                    request.getMethod(), request.getUriInfo().getPath());
        }
        if (request.getProperty(REQUEST_ID) instanceof String requestId) {
            response.getHeaders().putSingle(RoutingHeaders.REQUEST_ID, requestId);
            MDC.remove(MDC_REQUEST_ID);
        }
        if (request.getProperty(RequestPlan.COMMIT) instanceof ConsistencyToken commit) {
            response.getHeaders().putSingle(RoutingHeaders.CONSISTENCY_TOKEN, commit.toString());
        }
    }

    private RequestPlan plan(
            ContainerRequestContext request,
            ResourceInfo resource,
            String method,
            boolean mutation,
            boolean primaryFloor,
            boolean forcePrimary,
            ConsistencyToken token,
            String actor) {
        if (mutation) {
            return new RequestPlan(Strategy.PRIMARY, false, token, actor, true, "mutation");
        }
        if (primaryFloor) {
            return new RequestPlan(
                    Strategy.PRIMARY,
                    true,
                    token,
                    actor,
                    false,
                    forcePrimary ? RoutingHeaders.FORCE_PRIMARY : RoutingHeaders.CONSISTENCY);
        }
        if (RoutingHeaders.isSubscription(values(request, "Accept"), values(request, "Upgrade"))) {
            return new RequestPlan(Strategy.PRIMARY, false, token, actor, false, "subscription");
        }
        final RoutingStrategy annotated = annotation(resource);
        if (annotated != null) {
            return new RequestPlan(annotated.value(), false, token, actor, false, "@RoutingStrategy");
        }
        final Strategy ruled =
                rules().match(method, "/" + request.getUriInfo().getPath().replaceFirst("^/+", ""));
        return ruled != null
                ? new RequestPlan(ruled, false, token, actor, false, "rule")
                : new RequestPlan(Strategy.READ_AFTER_WRITE, false, token, actor, false, "safe method");
    }

    private EndpointRules rules() {
        EndpointRules current = rules;
        if (current == null) {
            current = config.web().rules().map(EndpointRules::parse).orElseGet(EndpointRules::none);
            rules = current;
        }
        return current;
    }

    private static RoutingStrategy annotation(ResourceInfo resource) {
        if (resource == null) {
            return null;
        }
        final Method method = resource.getResourceMethod();
        final RoutingStrategy onMethod = method == null ? null : method.getAnnotation(RoutingStrategy.class);
        if (onMethod != null || resource.getResourceClass() == null) {
            return onMethod;
        }
        return resource.getResourceClass().getAnnotation(RoutingStrategy.class);
    }

    private static java.util.Enumeration<String> values(ContainerRequestContext request, String header) {
        final List<String> values = request.getHeaders().get(header);
        return Collections.enumeration(values == null ? List.of() : values);
    }

    static Response answer(Response.Status status, String message) {
        return Response.status(status)
                .type("text/plain;charset=UTF-8")
                .header("Cache-Control", "no-store")
                .entity(message + "\n")
                .build();
    }
}
