package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.servlet.ReadYourWritesFilter;
import io.github.hibernaterouting.routing.servlet.spi.ActorResolver;
import jakarta.persistence.EntityManagerFactory;
import jakarta.servlet.DispatcherType;
import java.time.Duration;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Registers the library's read-your-writes filter in a servlet web application, right after Spring
 * Security's filter chain (Spring Boot ignores the library's {@code web-fragment.xml}): each request
 * gets a routing scope with its authenticated user as the actor, mutations run on the primary and
 * answer with {@code X-Consistency-Token} (and, with {@code hibernate.routing.web.consistency-cookie.name}, a
 * cookie holding it), and invalid routing headers are answered with 400.
 */
@AutoConfiguration(after = {HibernateRoutingAutoConfiguration.class, HibernateJpaAutoConfiguration.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ReadYourWritesFilter.class, FilterRegistrationBean.class})
@ConditionalOnBean({RoutingReplicaDataSources.class, EntityManagerFactory.class})
@ConditionalOnProperty(prefix = "hibernate.routing.web", name = "enabled", matchIfMissing = true)
public class HibernateRoutingWebAutoConfiguration {
    /** Spring Security's filter order when {@code spring.security.filter.order} is not set. */
    static final int SECURITY_FILTER_ORDER = -100;

    /** The filter, after Spring Security's; disabled while no replica is configured (routing off). */
    @Bean
    FilterRegistrationBean<ReadYourWritesFilter> hibernateRoutingReadYourWritesFilter(
            ObjectProvider<EntityManagerFactory> entityManagerFactories,
            ListableBeanFactory beans,
            ActorResolver actorResolver,
            RoutingReplicaDataSources replicas,
            HibernateRoutingProperties properties,
            Environment environment) {
        final HibernateRoutingProperties.Web web = properties.getWeb();
        final ReadYourWritesFilter filter = new ReadYourWritesFilter(
                        RoutedUnits.forFilter(entityManagerFactories, beans))
                .actorResolver(actorResolver)
                .requireActor(web.isRequireActor());
        if (web.getRules() != null && !web.getRules().isBlank()) {
            filter.rules(web.getRules());
        }
        final FilterRegistrationBean<ReadYourWritesFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName("ReadYourWritesFilter");
        consistencyCookie(web.getConsistencyCookie(), registration);
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        registration.setAsyncSupported(true);
        registration.setOrder(
                web.getFilterOrder() != null
                        ? web.getFilterOrder()
                        : environment.getProperty("spring.security.filter.order", Integer.class, SECURITY_FILTER_ORDER)
                                + 1);
        registration.setEnabled(!replicas.isEmpty());
        return registration;
    }

    /** Passes the consistency cookie to the filter's init-params, which check it when the filter starts. */
    private static void consistencyCookie(
            HibernateRoutingProperties.ConsistencyCookie cookie,
            FilterRegistrationBean<ReadYourWritesFilter> registration) {
        if (cookie.getName() == null || cookie.getName().isBlank()) {
            return;
        }
        final Duration maxAge = cookie.getMaxAge();
        if (maxAge == null || maxAge.getNano() != 0 || maxAge.toSeconds() < 1 || maxAge.toSeconds() > 86_400) {
            throw new RoutingConfigurationException(
                    "hibernate.routing.web.consistency-cookie.max-age",
                    String.valueOf(maxAge),
                    "whole seconds from 1s to 1d, such as 60s");
        }
        registration.addInitParameter(
                ReadYourWritesFilter.CONSISTENCY_COOKIE_PARAM, cookie.getName().trim());
        registration.addInitParameter(
                ReadYourWritesFilter.CONSISTENCY_COOKIE_MAX_AGE_PARAM, Long.toString(maxAge.toSeconds()));
        registration.addInitParameter(
                ReadYourWritesFilter.CONSISTENCY_COOKIE_SECURE_PARAM, Boolean.toString(cookie.isSecure()));
    }

    /** Without Spring Security: the container's authenticated principal. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("org.springframework.security.core.context.SecurityContextHolder")
    static class PrincipalActorConfiguration {
        @Bean
        @ConditionalOnMissingBean
        ActorResolver hibernateRoutingActorResolver() {
            return ActorResolver.userPrincipal();
        }
    }

    /** With Spring Security: the authenticated (not anonymous) user of the security context. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.security.core.context.SecurityContextHolder")
    static class SecurityActorConfiguration {
        @Bean
        @ConditionalOnMissingBean
        ActorResolver hibernateRoutingActorResolver() {
            return new SecurityContextActorResolver();
        }
    }
}
