package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.task.TaskDecorator;

/**
 * The {@link RoutingScopeTaskDecorator} as the application's {@code TaskDecorator}, which Spring Boot
 * applies to the task executor it builds ({@code @Async} methods run there). An application that
 * declares its own {@code TaskDecorator} keeps it; combine both with Spring's
 * {@code CompositeTaskDecorator}.
 */
@AutoConfiguration(after = HibernateRoutingAutoConfiguration.class)
@ConditionalOnBean(RoutingReplicaDataSources.class)
public class HibernateRoutingTaskAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean(TaskDecorator.class)
    RoutingScopeTaskDecorator hibernateRoutingTaskDecorator() {
        return new RoutingScopeTaskDecorator();
    }
}
