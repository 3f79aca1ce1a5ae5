package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import io.github.hibernaterouting.routing.servlet.internal.RequestRouting;
import java.lang.reflect.Method;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * Runs a method annotated with {@link RoutingStrategy} (or of an annotated class) in a routing scope
 * with the annotation's strategy, nested in the current scope, so a request's actor and minimum
 * position still apply. As on Jakarta REST resources, it never weakens a request that must use the
 * primary: a mutation, or a request whose headers force the primary.
 */
final class RoutingStrategyInterceptor implements MethodInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(RoutingStrategyInterceptor.class);
    private static final boolean WEB = ClassUtils.isPresent(
            "org.springframework.web.context.request.RequestContextHolder",
            RoutingStrategyInterceptor.class.getClassLoader());

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        final RoutingStrategy annotation = annotation(invocation);
        if (annotation == null) {
            return invocation.proceed();
        }
        if (WEB && requestMustUsePrimary()) {
            LOG.debug("@RoutingStrategy({}) not applied: the request must use the primary", annotation.value());
            return invocation.proceed();
        }
        try (RoutingScope scope = RoutingScope.open(annotation.value())) {
            return invocation.proceed();
        }
    }

    private static RoutingStrategy annotation(MethodInvocation invocation) {
        final Object target = invocation.getThis();
        final Class<?> targetClass =
                target == null ? invocation.getMethod().getDeclaringClass() : AopUtils.getTargetClass(target);
        final Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
        final RoutingStrategy onMethod = AnnotatedElementUtils.findMergedAnnotation(method, RoutingStrategy.class);
        return onMethod != null
                ? onMethod
                : AnnotatedElementUtils.findMergedAnnotation(targetClass, RoutingStrategy.class);
    }

    /** How the servlet filter routed the request, from the attribute it leaves for the Jakarta REST feature too. */
    private static boolean requestMustUsePrimary() {
        final RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
        return attributes != null
                && attributes.getAttribute(RequestRouting.ATTRIBUTE, RequestAttributes.SCOPE_REQUEST)
                        instanceof RequestRouting routing
                && routing.primaryRequired();
    }
}
