package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.persistence.EntityManagerFactory;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
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
    HealthContributor hibernateRoutingHealthContributor(
            ListableBeanFactory beans,
            ObjectProvider<MeterRegistry> meterRegistry,
            RoutingHealthProperties properties) {
        final MeterRegistry registry = meterRegistry.getIfUnique();
        final Map<String, EntityManagerFactory> units = RoutedUnits.routed(beans);
        if (units.size() == 1) {
            return new RoutingHealthContributor(units.values().iterator().next(), registry, properties.isStrict());
        }
        // Several persistence units: one component per unit, by bean name, each with its nodes.
        return CompositeHealthContributor.fromMap(
                units, emf -> new RoutingHealthContributor(emf, registry, properties.isStrict()));
    }
}
