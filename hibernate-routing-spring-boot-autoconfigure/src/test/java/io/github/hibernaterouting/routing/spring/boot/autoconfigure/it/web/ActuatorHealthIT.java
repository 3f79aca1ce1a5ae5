package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManagerFactory;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Actuator health as load balancers and orchestrators read it, over HTTP on the real cluster, with
 * Kubernetes probes on and {@code hibernateRouting} in the readiness group as docs/spring-boot.md
 * advises: a standby killed leaves the instance in (its replica {@code DEGRADED}, everything 200),
 * unless the strict switch is on; the primary down takes readiness out; liveness never depends on a
 * server.
 */
class ActuatorHealthIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER = PostgresClusterExtension.withStandbys(2);

    private static final Duration NOTICED = Duration.ofSeconds(30);

    @Test
    void replicaDown_isDegraded_andTheInstanceStaysUpAndReady() throws Exception {
        try (ConfigurableApplicationContext context = start(Map.of())) {
            final Http http = http(context);
            CLUSTER.cluster().kill(CLUSTER.cluster().standby(1));

            final HttpResponse<String> replica =
                    await(http, "/actuator/health/hibernateRouting/replica1", body -> body.contains("\"DEGRADED\""));
            assertThat(replica.statusCode()).as(replica.body()).isEqualTo(200);
            assertThat(replica.body()).contains("\"description\":\"cannot serve reads");
            assertStatus(http, "/actuator/health", 200, "UP");
            assertStatus(http, "/actuator/health/hibernateRouting", 200, "UP");
            assertStatus(http, "/actuator/health/hibernateRouting/replica2", 200, "UP");
            assertStatus(http, "/actuator/health/readiness", 200, "UP");
            assertStatus(http, "/actuator/health/liveness", 200, "UP");
        }
    }

    @Test
    void replicaDown_underTheStrictSwitch_isDown_andTakesReadinessOut_butNotLiveness() throws Exception {
        try (ConfigurableApplicationContext context =
                start(Map.of("management.health.hibernate-routing.strict", "true"))) {
            final Http http = http(context);
            CLUSTER.cluster().kill(CLUSTER.cluster().standby(1));

            final HttpResponse<String> replica =
                    await(http, "/actuator/health/hibernateRouting/replica1", body -> body.contains("\"DOWN\""));
            assertThat(replica.statusCode()).as(replica.body()).isEqualTo(503);
            assertStatus(http, "/actuator/health", 503, "DOWN");
            assertStatus(http, "/actuator/health/readiness", 503, "DOWN");
            assertStatus(http, "/actuator/health/liveness", 200, "UP");
        }
    }

    @Test
    void primaryDown_takesReadinessOut_butNotLiveness() throws Exception {
        try (ConfigurableApplicationContext context = start(Map.of())) {
            final Http http = http(context);
            CLUSTER.cluster().kill(CLUSTER.cluster().primary());

            await(http, "/actuator/health/readiness", body -> body.contains("\"DOWN\""));
            assertStatus(http, "/actuator/health/readiness", 503, "DOWN");
            assertStatus(http, "/actuator/health", 503, "DOWN");
            assertStatus(http, "/actuator/health/liveness", 200, "UP");
        }
    }

    private static ConfigurableApplicationContext start(Map<String, Object> overrides) {
        final Map<String, Object> properties = new HashMap<>();
        properties.put("management.endpoint.health.probes.enabled", "true");
        properties.put("management.endpoint.health.group.readiness.include", "readinessState,db,hibernateRouting");
        properties.put("management.endpoint.health.group.readiness.show-details", "always");
        // The primary's pool gives up quickly, so that its health check (Spring Boot's db indicator) answers.
        properties.put("spring.datasource.hikari.connection-timeout", "1000");
        properties.putAll(overrides);
        final ConfigurableApplicationContext context = WebTestApplication.start(CLUSTER.cluster(), properties);
        RoutingTestSupport.awaitReplicasUp(context.getBean(EntityManagerFactory.class));
        return context;
    }

    private static Http http(ConfigurableApplicationContext context) {
        return new Http(WebTestApplication.port(context), null);
    }

    /** Polls {@code path} until its body satisfies {@code condition}: health checks notice a dead server in the background. */
    private static HttpResponse<String> await(Http http, String path, Predicate<String> condition) throws Exception {
        final long deadline = System.nanoTime() + NOTICED.toNanos();
        HttpResponse<String> response = http.get(path);
        while (!condition.test(response.body()) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            response = http.get(path);
        }
        assertThat(condition.test(response.body()))
                .as("%s %s after the server was killed: %s", path, NOTICED, response.body())
                .isTrue();
        return response;
    }

    private static void assertStatus(Http http, String path, int code, String status) throws Exception {
        final HttpResponse<String> response = http.get(path);
        assertThat(response.statusCode()).as("%s: %s", path, response.body()).isEqualTo(code);
        // Actuator writes the overall status last.
        assertThat(response.body()).as(path).endsWith("\"status\":\"" + status + "\"}");
    }

    static PostgresCluster cluster() {
        return CLUSTER.cluster();
    }
}
