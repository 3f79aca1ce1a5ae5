package io.github.hibernaterouting.routing.servlet;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.servlet.internal.EndpointRules;
import io.github.hibernaterouting.routing.servlet.internal.RequestRouting;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.ext.Provider;
import java.io.IOException;
import java.lang.reflect.Method;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies {@link RoutingStrategy} to Jakarta REST resource methods.
 *
 * <p>For each annotated method (or method of an annotated class) it registers a filter that opens a
 * {@link RoutingScope} with the annotation's strategy when the request reaches the resource (after
 * authentication and authorisation filters, at {@link Priorities#USER}) and closes it when the
 * response is filtered. The scope nests in the servlet filter's scope, so the request's actor and
 * minimum position still apply. Requests that must stay on the primary (mutations, a header that
 * forces the primary, subscriptions) get no scope, so an annotation can never weaken them.
 *
 * <p>Jersey finds this feature by itself (through its {@code AutoDiscoverable} service); other
 * implementations register it like any {@link Provider}. The scope belongs to the request's thread:
 * this fits synchronous resource methods, where Jersey runs request filter, resource method and
 * response filter on one thread. For asynchronous resources ({@code @Suspended AsyncResponse},
 * {@code CompletionStage}) the work after the method returns runs on another thread, outside the
 * scope. If a resource method fails with an exception that no exception mapper handles, Jersey skips
 * the response filters; the servlet filter then closes the scope at the end of the request.
 */
@Provider
public final class RoutingStrategyFeature implements DynamicFeature {
    @Override
    public void configure(ResourceInfo resourceInfo, FeatureContext context) {
        final Method method = resourceInfo.getResourceMethod();
        RoutingStrategy annotation = method == null ? null : method.getAnnotation(RoutingStrategy.class);
        if (annotation == null && resourceInfo.getResourceClass() != null) {
            annotation = resourceInfo.getResourceClass().getAnnotation(RoutingStrategy.class);
        }
        if (annotation != null) {
            context.register(new ScopeFilter(annotation.value()));
        }
    }

    /** Opens the annotation's scope before the resource method and closes it after. */
    @Priority(Priorities.USER)
    static final class ScopeFilter implements ContainerRequestFilter, ContainerResponseFilter {
        private static final Logger LOG = LoggerFactory.getLogger(RoutingStrategyFeature.class);
        private static final String SCOPE = ScopeFilter.class.getName() + ".scope";

        private final Strategy strategy;

        ScopeFilter(Strategy strategy) {
            this.strategy = strategy;
        }

        @Override
        public void filter(ContainerRequestContext request) {
            final Object routing = request.getProperty(RequestRouting.ATTRIBUTE);
            if (routing instanceof RequestRouting decided && decided.primaryRequired()
                    || !EndpointRules.SAFE_METHODS.contains(request.getMethod())) {
                LOG.debug("@RoutingStrategy({}) not applied: the request must use the primary", strategy);
                return;
            }
            request.setProperty(SCOPE, RoutingScope.open(strategy));
        }

        @Override
        public void filter(ContainerRequestContext request, ContainerResponseContext response) throws IOException {
            if (request.getProperty(SCOPE) instanceof RoutingScope scope) {
                request.removeProperty(SCOPE);
                scope.close();
            }
        }
    }
}
