package io.github.hibernaterouting.sample.boot;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;

/**
 * The sample application. {@code main} starts an embedded PostgreSQL primary with two streaming
 * replicas and a Redis on 127.0.0.1 (the project's test kit), unless {@code SPRING_DATASOURCE_URL}
 * names your own primary (then give {@code HIBERNATE_ROUTING_REPLICA_URLS} and, for several
 * instances, {@code HIBERNATE_ROUTING_REDIS_URI} too). The embedded servers stop with the application.
 */
@SpringBootApplication
public class SpringBootSample {
    public static void main(String[] args) {
        if (System.getenv("SPRING_DATASOURCE_URL") != null) {
            SpringApplication.run(SpringBootSample.class, args);
            return;
        }
        final PostgresCluster cluster = PostgresCluster.builder().standbys(2).start();
        final RedisServer redis;
        try {
            redis = RedisServer.start();
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        run(cluster, redis, args);
    }

    /**
     * Runs the application on {@code cluster} and {@code redis}; they are closed when the application is.
     */
    public static ConfigurableApplicationContext run(PostgresCluster cluster, RedisServer redis, String... args) {
        final SpringApplication application = new SpringApplication(SpringBootSample.class);
        application.setDefaultProperties(properties(cluster, redis));
        // For the walk-through's pause and resume of replay (ReplayController).
        application.addInitializers(context -> context.getBeanFactory().registerSingleton("embeddedCluster", cluster));
        application.addListeners(new ApplicationListener<ContextClosedEvent>() {
            @Override
            public void onApplicationEvent(ContextClosedEvent event) {
                redis.close();
                cluster.close();
            }
        });
        try {
            return application.run(args);
        } catch (RuntimeException e) {
            redis.close();
            cluster.close();
            throw e;
        }
    }

    /** The three properties an application needs: its primary (as always), the replicas, and Redis. */
    static Map<String, Object> properties(PostgresCluster cluster, RedisServer redis) {
        final Map<String, Object> properties = new HashMap<>();
        properties.put("spring.datasource.url", cluster.primary().jdbcUrl());
        properties.put("spring.datasource.username", cluster.user());
        properties.put("spring.datasource.password", cluster.password());
        properties.put(
                "hibernate.routing.replica_urls",
                cluster.standbys().stream().map(Node::jdbcUrl).collect(Collectors.joining(",")));
        properties.put("hibernate.routing.redis.uri", redis.uri());
        return properties;
    }
}
