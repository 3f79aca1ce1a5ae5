package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.servlet.ReadYourWritesFilter;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.persistence.EntityManagerFactory;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring MVC application with Spring Security and Spring Data JPA over HTTP, on the real cluster:
 * the read-your-writes filter after Spring Security, {@code @RoutingStrategy} on controllers and beans,
 * open-session-in-view on and off, two instances sharing a Redis, Actuator health and meters.
 */
class SpringWebIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER =
            PostgresClusterExtension.withStandbys(2).withRedis();

    static PostgresCluster cluster() {
        return CLUSTER.cluster();
    }

    /** Pauses replay on every standby once they replayed everything the tests wrote so far. */
    static void pauseStandbys() throws Exception {
        cluster().awaitCaughtUp(Duration.ofSeconds(30));
        cluster().standbys().forEach(cluster()::pauseReplay);
    }

    static Node servedBy(HttpResponse<String> response) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return cluster().nodeForPort(Integer.parseInt(response.body()));
    }

    /** An instance's nodes and latest routing decisions, newest first: for failure messages. */
    static String routing(ConfigurableApplicationContext context) {
        final RoutingStatus status = RoutingStatus.of(context.getBean(EntityManagerFactory.class));
        return "nodes " + status.nodes() + ", latest decisions "
                + status.decisions().subList(0, Math.min(10, status.decisions().size()));
    }

    /** What every application gets, with open-session-in-view on (Spring Boot's default) or off. */
    abstract static class OneInstance {
        ConfigurableApplicationContext context;
        Http alice;
        Http bob;
        Http anonymous;

        abstract boolean openInView();

        @BeforeAll
        void start() {
            context = WebTestApplication.start(
                    cluster(), Map.of("spring.jpa.open-in-view", Boolean.toString(openInView())));
            final int port = WebTestApplication.port(context);
            alice = new Http(port, "alice");
            bob = new Http(port, "bob");
            anonymous = new Http(port, null);
            RoutingTestSupport.awaitReplicasUp(context.getBean(EntityManagerFactory.class));
        }

        /** Both replicas up again, also after a test killed one: the library sees it come back in the background. */
        @BeforeEach
        void replicasUp() {
            RoutingTestSupport.awaitReplicasUp(context.getBean(EntityManagerFactory.class));
        }

        @AfterAll
        void stop() {
            context.close();
        }

        @Test
        void writeThenReadInLaterRequests_seesTheWriteForItsAuthor_whileReplicasArePaused() throws Exception {
            pauseStandbys();
            final HttpResponse<String> created = alice.post("/notes", "alice's note");
            assertThat(created.statusCode()).isEqualTo(200);
            assertThat(created.headers().firstValue(ReadYourWritesFilter.CONSISTENCY_TOKEN_HEADER))
                    .isPresent();
            final String id = created.body();

            final HttpResponse<String> read = alice.get("/notes/" + id);
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.body()).isEqualTo("alice's note");
            // Someone else reads on a replica, which has not replayed alice's write.
            assertThat(bob.get("/notes/" + id).statusCode())
                    .as(() -> "bob's read, on a paused replica; " + routing(context))
                    .isEqualTo(404);
            // ... unless they bring alice's token.
            final HttpResponse<String> withToken = bob.get(
                    "/notes/" + id,
                    ReadYourWritesFilter.CONSISTENCY_TOKEN_HEADER,
                    created.headers()
                            .firstValue(ReadYourWritesFilter.CONSISTENCY_TOKEN_HEADER)
                            .orElseThrow());
            assertThat(withToken.statusCode()).isEqualTo(200);
        }

        @Test
        void writeThenReadInTheSameRequest_seesTheWrite_whileReplicasArePaused() throws Exception {
            pauseStandbys();
            final HttpResponse<String> response = alice.post("/notes/then-read", "same request");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("same request");
        }

        @Test
        void readOnlyRequest_runsOnAReplica() throws Exception {
            assertThat(servedBy(alice.get("/port")).isPrimary())
                    .as(() -> routing(context))
                    .isFalse();
        }

        @Test
        void routingStrategy_onAController_keepsTheRequestOnThePrimary() throws Exception {
            assertThat(servedBy(alice.get("/port/primary")).isPrimary()).isTrue();
        }

        @Test
        void routingStrategy_onABeanMethod_keepsItOnThePrimary() throws Exception {
            assertThat(servedBy(alice.get("/port/primary-bean")).isPrimary()).isTrue();
        }

        @Test
        void forcePrimaryHeader_readsOnThePrimary() throws Exception {
            assertThat(servedBy(alice.get("/port", ReadYourWritesFilter.FORCE_PRIMARY_HEADER, "true"))
                            .isPrimary())
                    .isTrue();
        }

        @Test
        void invalidRoutingHeader_is400NamingIt() throws Exception {
            final HttpResponse<String> response =
                    alice.get("/port", ReadYourWritesFilter.CONSISTENCY_TOKEN_HEADER, "not-a-position");
            assertThat(response.statusCode()).isEqualTo(400);
            assertThat(response.body()).contains(ReadYourWritesFilter.CONSISTENCY_TOKEN_HEADER);
        }

        @Test
        void unauthenticatedRequest_isRefusedBySpringSecurity_beforeItIsRouted() throws Exception {
            final HttpResponse<String> response = anonymous.post("/notes", "nobody's");
            assertThat(response.statusCode()).isEqualTo(401);
            assertThat(response.headers().firstValue(ReadYourWritesFilter.CONSISTENCY_TOKEN_HEADER))
                    .isEmpty();
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class OpenSessionInView extends OneInstance {
        @Override
        boolean openInView() {
            return true;
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class NoOpenSessionInView extends OneInstance {
        @Override
        boolean openInView() {
            return false;
        }

        @Test
        void health_showsEachReplica_andAKilledOneDegraded() throws Exception {
            final HttpResponse<String> healthy = anonymous.get("/actuator/health/hibernateRouting");
            assertThat(healthy.statusCode()).as(healthy.body()).isEqualTo(200);
            assertThat(healthy.body())
                    .contains("\"primary\"", "\"replica1\"", "\"replica2\"", "\"circuitBreaker\":\"closed\"");

            cluster().kill(cluster().standby(1));
            // The health check notices it in the background: poll.
            HttpResponse<String> down = anonymous.get("/actuator/health/hibernateRouting/replica1");
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!down.body().contains("\"DEGRADED\"") && System.nanoTime() < deadline) {
                Thread.sleep(50);
                down = anonymous.get("/actuator/health/hibernateRouting/replica1");
            }
            assertThat(down.body())
                    .as("replica1's health 30 s after its standby was killed: %s", down.body())
                    .contains("\"status\":\"DEGRADED\"");
            // The instance still serves every request, so it stays UP (ActuatorHealthIT: probes, the strict switch).
            assertThat(down.statusCode()).isEqualTo(200);
            final HttpResponse<String> other = anonymous.get("/actuator/health/hibernateRouting/replica2");
            assertThat(other.body()).as(() -> routing(context)).contains("\"status\":\"UP\"");
        }

        @Test
        void meters_areInSpringBootsRegistry() throws Exception {
            alice.get("/port");
            final MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find("hibernate.routing.statements").counters()).isNotEmpty();
            assertThat(registry.find("hibernate.routing.replica.lag.bytes")
                            .tag("node", "replica1")
                            .gauge())
                    .isNotNull();
            assertThat(registry.find("hikaricp.connections.max")
                            .tag("pool", "hibernate-routing-replica1")
                            .gauge())
                    .isNotNull();
        }
    }

    /** With the consistency cookie switched on by its property: another client that has it reads the write. */
    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class WithConsistencyCookie {
        ConfigurableApplicationContext context;

        @BeforeAll
        void start() {
            context = WebTestApplication.start(
                    cluster(),
                    Map.of(
                            "hibernate.routing.web.consistency-cookie.name", "rl-consistency",
                            "hibernate.routing.web.consistency-cookie.max-age", "2m"));
            RoutingTestSupport.awaitReplicasUp(context.getBean(EntityManagerFactory.class));
        }

        @AfterAll
        void stop() {
            context.close();
        }

        @Test
        void mutationSetsTheCookie_andARequestWithItSeesTheWrite_whileReplicasArePaused() throws Exception {
            pauseStandbys();
            final Http alice = new Http(WebTestApplication.port(context), "alice");
            final Http bob = new Http(WebTestApplication.port(context), "bob");
            final HttpResponse<String> created = alice.post("/notes", "alice's note, by cookie");
            assertThat(created.statusCode()).isEqualTo(200);
            final String setCookie = created.headers().allValues("Set-Cookie").stream()
                    .filter(header -> header.startsWith("rl-consistency="))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no consistency cookie: " + created.headers()));
            assertThat(setCookie).contains("Max-Age=120", "HttpOnly", "SameSite=Lax");
            final String cookie = setCookie.split(";", 2)[0];
            assertThat(cookie)
                    .isEqualTo("rl-consistency="
                            + created.headers()
                                    .firstValue(ReadYourWritesFilter.CONSISTENCY_TOKEN_HEADER)
                                    .orElseThrow());
            final String id = created.body();

            assertThat(bob.get("/notes/" + id).statusCode())
                    .as(() -> "bob's read without the cookie, on a paused replica; " + routing(context))
                    .isEqualTo(404);
            final HttpResponse<String> withCookie = bob.get("/notes/" + id, "Cookie", cookie);
            assertThat(withCookie.statusCode())
                    .as(() -> "bob's read with alice's cookie; " + routing(context))
                    .isEqualTo(200);
            assertThat(withCookie.body()).isEqualTo("alice's note, by cookie");
            assertThat(bob.get("/notes/" + id, "Cookie", "rl-consistency=0/3000060")
                            .statusCode())
                    .as("a malformed cookie")
                    .isEqualTo(400);
        }
    }

    /** Two instances of the application, one Redis: a write through one is read through the other. */
    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class TwoInstances {
        ConfigurableApplicationContext first;
        ConfigurableApplicationContext second;

        @BeforeAll
        void start() {
            // A short marker window: for one window after the library first meets a Redis (or one
            // that lost its data), every actor reads from the primary, which would hide the replicas.
            final Map<String, Object> redis = Map.of(
                    "hibernate.routing.redis.uri",
                    CLUSTER.redis().uri(),
                    "hibernate.routing.redis.window",
                    "1s",
                    "hibernate.routing.redis.allow_short_window",
                    "true");
            first = WebTestApplication.start(cluster(), redis);
            second = WebTestApplication.start(cluster(), redis);
            RoutingTestSupport.awaitReplicasUp(first.getBean(EntityManagerFactory.class));
            RoutingTestSupport.awaitReplicasUp(second.getBean(EntityManagerFactory.class));
        }

        /** Until reads through both instances go to replicas again: the window after meeting Redis has ended. */
        private void awaitMarkerWindowOver() throws Exception {
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            for (ConfigurableApplicationContext instance : List.of(first, second)) {
                final Http bob = new Http(WebTestApplication.port(instance), "bob");
                while (servedBy(bob.get("/port")).isPrimary()) {
                    assertThat(System.nanoTime())
                            .as(() -> "the marker window ended; " + routing(instance))
                            .isLessThan(deadline);
                    Thread.sleep(50);
                }
            }
        }

        @AfterAll
        void stop() {
            first.close();
            second.close();
        }

        @Test
        void writeThroughOneInstance_isReadThroughTheOther_whileReplicasArePaused() throws Exception {
            awaitMarkerWindowOver();
            pauseStandbys();
            final Http aliceOnFirst = new Http(WebTestApplication.port(first), "alice");
            final Http aliceOnSecond = new Http(WebTestApplication.port(second), "alice");
            final Http bobOnSecond = new Http(WebTestApplication.port(second), "bob");

            final String id =
                    aliceOnFirst.post("/notes", "written through the first").body();

            final HttpResponse<String> read = aliceOnSecond.get("/notes/" + id);
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.body()).isEqualTo("written through the first");
            assertThat(bobOnSecond.get("/notes/" + id).statusCode())
                    .as(() -> "bob's read through the second instance, on a paused replica; " + routing(second))
                    .isEqualTo(404);
        }
    }
}
