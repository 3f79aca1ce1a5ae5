package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.monitoring.MonitoringFiles;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.monitoring.PrometheusScrape;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManagerFactory;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The shipped alerting rules and dashboard name only metrics, labels and label values that a running
 * application's {@code /actuator/prometheus} has, after traffic that makes the library register every
 * meter they use: replica reads, a write, reads after it that find no replica in time, a replica that
 * fails to give a connection, and a Redis marker that is gone.
 */
class MonitoringFilesIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER =
            PostgresClusterExtension.withStandbys(2).withRedis();

    private static final Duration CONDITION_TIMEOUT = Duration.ofSeconds(30);

    @Test
    void alertsAndDashboard_nameOnlyMetricsAndLabelsOfALiveScrape() throws Exception {
        final PostgresCluster cluster = CLUSTER.cluster();
        try (ConfigurableApplicationContext context = WebTestApplication.start(
                cluster,
                Map.of(
                        "management.endpoints.web.exposure.include", "health,prometheus",
                        "hibernate.routing.redis.uri", CLUSTER.redis().uri(),
                        "hibernate.routing.redis.window", "1s",
                        "hibernate.routing.redis.allow_short_window", "true",
                        // One check at start and then none during the test: a killed standby is found by
                        // the reads that try it (counted as replica failures), not by the health check.
                        "hibernate.routing.health_check_interval", "1h"))) {
            final EntityManagerFactory emf = context.getBean(EntityManagerFactory.class);
            RoutingTestSupport.awaitReplicasUp(emf);
            final int port = WebTestApplication.port(context);
            final Http alice = new Http(port, "alice");
            final Http bob = new Http(port, "bob");
            final Http actuator = new Http(port, null);

            // Replica reads, once the window after meeting Redis has ended.
            awaitScrape(
                    actuator, emf, () -> bob.get("/port"), "hibernate_routing_statements_total", "target", "replica");

            // A write, then reads after it while no standby replays: the gate times out, then stalls.
            cluster.awaitCaughtUp(CONDITION_TIMEOUT);
            cluster.standbys().forEach(cluster::pauseReplay);
            final HttpResponse<String> created = alice.post("/notes", "alice's note");
            assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
            awaitScrape(
                    actuator,
                    emf,
                    () -> alice.get("/notes/" + created.body()),
                    "hibernate_routing_lsn_gate_total",
                    "outcome",
                    "stalled");
            assertThat(scrape(actuator).has("hibernate_routing_fallbacks_total", "reason", "lsn-fallback"))
                    .isTrue();
            cluster.resumeAll();

            // A replica that cannot give a connection.
            cluster.kill(cluster.standby(1));
            awaitScrape(actuator, emf, () -> bob.get("/port"), "hibernate_routing_replica_failures_total", null, null);

            // No Redis: a mutation is refused before it runs, an actor's read goes to the primary.
            CLUSTER.redis().stop();
            assertThat(alice.post("/notes", "refused").statusCode()).isEqualTo(503);
            awaitScrape(
                    actuator,
                    emf,
                    () -> alice.get("/port"),
                    "hibernate_routing_redis_errors_total",
                    "operation",
                    "read");

            final PrometheusScrape scrape = scrape(actuator);
            assertThat(scrape.has("hibernate_routing_redis_errors_total", "operation", "store"))
                    .isTrue();
            final List<String> problems = new ArrayList<>();
            problems.addAll(scrape.problems(MonitoringFiles.alertQueries()));
            problems.addAll(scrape.problems(MonitoringFiles.dashboardQueries()));
            assertThat(problems)
                    .as(
                            "names in %s and %s that the running application's scrape lacks",
                            MonitoringFiles.RULES, MonitoringFiles.DASHBOARD)
                    .isEmpty();
        }
    }

    /** One more request. */
    private interface Request {
        HttpResponse<String> send() throws Exception;
    }

    /** Sends {@code request} until the scrape has a series of {@code metric} (with {@code label=value} if given). */
    private static void awaitScrape(
            Http actuator, EntityManagerFactory emf, Request request, String metric, String label, String value)
            throws Exception {
        final long deadline = System.nanoTime() + CONDITION_TIMEOUT.toNanos();
        while (true) {
            request.send();
            if (scrape(actuator).has(metric, label, value)) {
                return;
            }
            assertThat(System.nanoTime())
                    .as(() -> "a series " + metric + (label == null ? "" : "{" + label + "=\"" + value + "\"}")
                            + " within " + CONDITION_TIMEOUT + "; routing: " + RoutingStatus.of(emf))
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static PrometheusScrape scrape(Http actuator) throws Exception {
        final HttpResponse<String> response = actuator.get("/actuator/prometheus");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return PrometheusScrape.parse(response.body());
    }
}
