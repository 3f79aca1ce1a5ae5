package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;

/**
 * Applies {@link RoutingStrategy} to the methods of Spring beans, Spring MVC controllers included: a
 * method (or every method of a class) so annotated runs in a routing scope with that strategy. The
 * scope is opened outside the method's transaction, so the transaction starts under it.
 */
@AutoConfiguration
@ConditionalOnClass({RoutingStrategy.class, Advisor.class})
public class HibernateRoutingStrategyAutoConfiguration {
    /** Outside {@code @Transactional}'s interceptor, whose order is {@link Ordered#LOWEST_PRECEDENCE} by default. */
    static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor hibernateRoutingStrategyAdvisor() {
        final ComposablePointcut pointcut = new ComposablePointcut(
                        new AnnotationMatchingPointcut(RoutingStrategy.class, true))
                .union(AnnotationMatchingPointcut.forMethodAnnotation(RoutingStrategy.class));
        final DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(pointcut, new RoutingStrategyInterceptor());
        advisor.setOrder(ORDER);
        return advisor;
    }
}
