package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration;
import org.springframework.boot.hibernate.autoconfigure.HibernatePropertiesCustomizer;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Routes the JPA persistence unit Spring Boot builds: its {@code DataSource} is the primary, the
 * replicas are the pools built from {@code hibernate.routing.replica_urls} or
 * {@code hibernate.routing.replicas[n].*}, and every other {@code hibernate.routing.*} property is
 * passed to the library. Without replicas the library does nothing and Hibernate runs as without it.
 *
 * <p>Under Spring, read-write transactions default to {@code hibernate.routing.transactions=PRIMARY}
 * (the library's own default is {@code LAZY}): every repository call and service method is a
 * transaction, reads that may go to a replica are marked {@code @Transactional(readOnly = true)}
 * (Spring Data's read methods are), and a read-write transaction is where an application reads what
 * it is about to decide on and write. Set the property to {@code LAZY} to start those on a replica too.
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class, before = HibernateJpaAutoConfiguration.class)
@ConditionalOnClass({HibernatePropertiesCustomizer.class, RoutingSettings.class})
@EnableConfigurationProperties(HibernateRoutingProperties.class)
public class HibernateRoutingAutoConfiguration {
    /** The transaction mode under Spring, unless {@value RoutingSettings#TRANSACTIONS} is set. */
    static final String SPRING_TRANSACTIONS = RoutingSettings.TransactionMode.PRIMARY.name();

    /** The replica pools; closed with the application context. */
    @Bean(destroyMethod = "close")
    RoutingReplicaDataSources hibernateRoutingReplicaDataSources(
            HibernateRoutingProperties properties,
            ObjectProvider<DataSourceProperties> dataSourceProperties,
            ObjectProvider<MeterRegistry> meterRegistry,
            Environment environment) {
        final DataSourceProperties primary = dataSourceProperties.getIfAvailable();
        return ReplicaPools.build(
                properties,
                environment::getProperty,
                primary == null ? null : primary.determineUsername(),
                primary == null ? null : primary.determinePassword(),
                meterRegistry.getIfUnique());
    }

    /** Puts the replicas, the library's settings and the meter registry into the persistence unit's properties. */
    @Bean
    HibernatePropertiesCustomizer hibernateRoutingPropertiesCustomizer(
            RoutingReplicaDataSources replicas, Environment environment, ObjectProvider<MeterRegistry> meterRegistry) {
        // Read now, so that a bad key fails the start even before the persistence unit is built.
        final Map<String, Object> settings = LibrarySettings.from(environment);
        return properties -> {
            if (replicas.isEmpty()) {
                return;
            }
            properties.putIfAbsent(RoutingSettings.TRANSACTIONS, SPRING_TRANSACTIONS);
            properties.putAll(settings);
            properties.put(RoutingSettings.REPLICA_DATASOURCES, replicas.dataSources());
            // Present and empty, so that the library does not read HIBERNATE_ROUTING_REPLICA_URLS as replica URLs
            // besides the data sources: the starter has read it already.
            properties.put(RoutingSettings.REPLICA_URLS, "");
            final MeterRegistry registry = meterRegistry.getIfUnique();
            if (registry != null) {
                properties.put(RoutingSettings.METER_REGISTRY, registry);
            }
        };
    }
}
