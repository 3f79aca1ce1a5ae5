package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.persistence.EntityManagerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The {@code hibernateRouting} health contributor; {@code management.health.hibernate-routing.enabled=false} removes
 * it, {@code management.health.hibernate-routing.strict=true} makes a replica that cannot serve {@code DOWN}.
 */
@AutoConfiguration(after = {HibernateRoutingAutoConfiguration.class, HibernateJpaAutoConfiguration.class})
@ConditionalOnClass(HealthContributor.class)
@ConditionalOnBean({RoutingReplicaDataSources.class, EntityManagerFactory.class})
@ConditionalOnEnabledHealthIndicator("hibernate-routing")
@EnableConfigurationProperties(RoutingHealthProperties.class)
public class HibernateRoutingHealthAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean(name = "hibernateRoutingHealthContributor")
    RoutingHealthContributor hibernateRoutingHealthContributor(
            EntityManagerFactory entityManagerFactory,
            ObjectProvider<MeterRegistry> meterRegistry,
            RoutingHealthProperties properties) {
        return new RoutingHealthContributor(entityManagerFactory, meterRegistry.getIfUnique(), properties.isStrict());
    }
}
