package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.twounits;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two entity manager factories, neither {@code @Primary}: the application starts, both units are
 * routed (the starter's settings reach every unit Boot's builder makes), the start says which unit
 * the read-your-writes filter serves, and health shows each unit's servers.
 */
@ExtendWith(OutputCaptureExtension.class)
class TwoPersistenceUnitsIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER = PostgresClusterExtension.withStandbys(1);

    @Test
    void twoUnitsWithoutPrimary_start_eachRoutesReadsToTheReplica_andTheStartSaysWhichUnitTheFilterServes(
            CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context = TwoUnitsApplication.start(CLUSTER.cluster(), Map.of())) {
            final Map<String, EntityManagerFactory> units = context.getBeansOfType(EntityManagerFactory.class);
            assertThat(units).hasSize(2);
            for (EntityManagerFactory emf : units.values()) {
                RoutingTestSupport.awaitReplicasUp(emf);
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(RoutingTestSupport.servedBy(CLUSTER.cluster(), em)
                                    .isPrimary())
                            .as("a read of %s (%s)", emf, RoutingTestSupport.routingState(emf))
                            .isFalse();
                }
                assertThat(RoutingStatus.of(emf)).isNotNull();
            }
            assertThat(output.getAll())
                    .contains(
                            "The read-your-writes filter serves persistence unit 'notes' (bean 'notesEntityManagerFactory')");

            final int port =
                    ((WebServerApplicationContext) context).getWebServer().getPort();
            final HttpResponse<String> health = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(
                                            "http://127.0.0.1:" + port + "/actuator/health/hibernateRouting"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
            assertThat(health.body())
                    .as("each unit's nodes, by bean name")
                    .contains("\"notesEntityManagerFactory\"", "\"auditEntityManagerFactory\"", "\"replica1\"");
        }
    }
}
