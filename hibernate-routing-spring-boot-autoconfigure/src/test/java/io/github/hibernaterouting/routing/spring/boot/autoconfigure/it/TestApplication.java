package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it;

import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.Note;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.scheduling.annotation.EnableAsync;

/** A Spring Boot application with Spring Data JPA, configured as a user would: Boot's data source and the replica URLs. */
@SpringBootApplication(scanBasePackageClasses = Note.class)
@EnableAsync
public class TestApplication {
    /** The properties a user writes for {@code cluster}: the primary as spring.datasource, the replicas as one property. */
    public static Map<String, Object> properties(PostgresCluster cluster) {
        final Map<String, Object> properties = new HashMap<>();
        properties.put("spring.datasource.url", cluster.primary().jdbcUrl());
        properties.put("spring.datasource.username", cluster.user());
        properties.put("spring.datasource.password", cluster.password());
        properties.put(
                "hibernate.routing.replica_urls",
                cluster.standbys().stream().map(Node::jdbcUrl).collect(Collectors.joining(",")));
        // Test pace: replicas checked often, so that a paused or killed one is seen quickly.
        properties.put("hibernate.routing.health_check_interval", "100ms");
        properties.put("hibernate.routing.circuit_breaker.open_duration", "200ms");
        // A time bound no test reaches: a replica whose replay a test paused stays eligible however slow the machine
        // is; the byte bound (16MB) still holds. Not "0": that switches the bound off but leaves lag data older than
        // 1 s counting as unknown, so a health check a busy machine delays would make the replicas ineligible.
        properties.put("hibernate.routing.max_replica_lag", "1h");
        properties.put("spring.jpa.hibernate.ddl-auto", "update");
        properties.put("spring.datasource.hikari.maximum-pool-size", "5");
        properties.put("spring.main.banner-mode", "off");
        return properties;
    }

    /** Starts the application without a web server, with {@code overrides} on top of {@link #properties}. */
    public static ConfigurableApplicationContext start(PostgresCluster cluster, Map<String, Object> overrides) {
        final Map<String, Object> properties = properties(cluster);
        properties.putAll(overrides);
        return new SpringApplicationBuilder(TestApplication.class)
                .web(WebApplicationType.NONE)
                .properties(properties)
                .run();
    }
}
