package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.twounits;

import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.TestApplication;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.Note;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManagerFactory;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jpa.EntityManagerFactoryBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;

/**
 * Two persistence units, as Spring Boot's documentation shows them: two entity manager factories from
 * Boot's builder on the application's data source, each with its transaction manager, neither {@code @Primary}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TwoUnitsApplication {
    @Bean
    LocalContainerEntityManagerFactoryBean notesEntityManagerFactory(
            EntityManagerFactoryBuilder builder, DataSource dataSource) {
        return builder.dataSource(dataSource)
                .packages(Note.class)
                .persistenceUnit("notes")
                .build();
    }

    @Bean
    LocalContainerEntityManagerFactoryBean auditEntityManagerFactory(
            EntityManagerFactoryBuilder builder, DataSource dataSource) {
        return builder.dataSource(dataSource)
                .packages(AuditEntry.class)
                .persistenceUnit("audit")
                .build();
    }

    /** Each unit its own transaction manager, as an application with two units defines them. */
    @Bean
    JpaTransactionManager notesTransactionManager(
            @Qualifier("notesEntityManagerFactory") EntityManagerFactory entityManagerFactory) {
        return new JpaTransactionManager(entityManagerFactory);
    }

    @Bean
    JpaTransactionManager auditTransactionManager(
            @Qualifier("auditEntityManagerFactory") EntityManagerFactory entityManagerFactory) {
        return new JpaTransactionManager(entityManagerFactory);
    }

    /** Starts the application, a servlet one on a free port with Actuator's health, on {@code cluster}. */
    public static ConfigurableApplicationContext start(PostgresCluster cluster, Map<String, Object> overrides) {
        final Map<String, Object> properties = TestApplication.properties(cluster);
        properties.put("server.port", "0");
        properties.put("management.endpoints.web.exposure.include", "health");
        properties.put("management.endpoint.health.show-details", "always");
        properties.put("spring.jpa.open-in-view", "false");
        // No repositories here; an application with two units declares @EnableJpaRepositories per unit, which
        // turns Boot's single-unit repository scanning off as this does.
        properties.put("spring.data.jpa.repositories.enabled", "false");
        properties.putAll(overrides);
        return new SpringApplicationBuilder(TwoUnitsApplication.class)
                .web(WebApplicationType.SERVLET)
                .properties(properties)
                .run();
    }
}
