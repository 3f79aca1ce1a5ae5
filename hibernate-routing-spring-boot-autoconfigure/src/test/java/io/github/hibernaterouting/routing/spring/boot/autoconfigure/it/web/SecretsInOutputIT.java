package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import jakarta.persistence.EntityManagerFactory;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * No credential in anything a Spring Boot application with the starter prints or serves: its whole
 * output (start, requests, a standby killed mid-run, Redis connections dropped, shutdown), with the
 * library and HikariCP logging at DEBUG, and its Actuator health. The database and Redis passwords
 * are distinctive, so that any occurrence is a leak.
 */
@ExtendWith(OutputCaptureExtension.class)
class SecretsInOutputIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER =
            PostgresClusterExtension.withStandbys(2).withRedis();

    private static final String APP_USER = "shop_app";
    private static final String DB_PASSWORD = "Db-pw-7c1e9a4f-never-logged";
    private static final String REPLICA_USER = "shop_reader";
    private static final String REPLICA_PASSWORD = "Replica-pw-52d08be3-never-logged";
    private static final String REDIS_PASSWORD = "Redis-pw-9f3b61aa-never-logged";

    @Test
    void noPasswordInTheOutputOrTheEndpoints_ofARunWithFailures(CapturedOutput output) throws Exception {
        final PostgresCluster cluster = CLUSTER.cluster();
        roles(cluster);
        try (RedisClient admin = RedisClient.create(CLUSTER.redis().uri());
                StatefulRedisConnection<String, String> redis = admin.connect()) {
            redis.sync().configSet("requirepass", REDIS_PASSWORD);
            try {
                run(cluster, output, redis);
            } finally {
                redis.sync().auth(REDIS_PASSWORD);
                redis.sync().configSet("requirepass", "");
            }
        }
    }

    private static void run(
            PostgresCluster cluster, CapturedOutput output, StatefulRedisConnection<String, String> redis)
            throws Exception {
        final Map<String, Object> properties = new HashMap<>();
        properties.put("spring.datasource.username", APP_USER);
        properties.put("spring.datasource.password", DB_PASSWORD);
        properties.put("hibernate.routing.replica_user", REPLICA_USER);
        properties.put("hibernate.routing.replica_password", REPLICA_PASSWORD);
        properties.put(
                "hibernate.routing.redis.uri",
                "redis://:" + REDIS_PASSWORD + "@127.0.0.1:" + CLUSTER.redis().port());
        properties.put("hibernate.routing.redis.window", "1s");
        properties.put("hibernate.routing.redis.allow_short_window", "true");
        properties.put("logging.level.io.github.hibernaterouting", "DEBUG");
        properties.put("logging.level.com.zaxxer.hikari", "DEBUG");
        properties.put("management.endpoints.web.exposure.include", "health,metrics");
        final List<String> served = new ArrayList<>();
        try (ConfigurableApplicationContext context = WebTestApplication.start(cluster, properties)) {
            final Http alice = new Http(WebTestApplication.port(context), "alice");
            final Http anonymous = new Http(WebTestApplication.port(context), null);
            RoutingTestSupport.awaitReplicasUp(context.getBean(EntityManagerFactory.class));
            assertThat(alice.post("/notes", "a note").statusCode()).isEqualTo(200);
            assertThat(alice.get("/port").statusCode()).isEqualTo(200);

            // Failures: the library, HikariCP and Lettuce log the most on these paths.
            redis.sync()
                    .clientKill(io.lettuce.core.KillArgs.Builder.typeNormal().skipme());
            cluster.kill(cluster.standby(1));
            awaitDown(anonymous);
            for (int i = 0; i < 10; i++) {
                alice.get("/port");
            }
            alice.post("/notes", "after the failures");
            served.add(anonymous.get("/actuator/health").body());
            served.add(anonymous.get("/actuator/health/hibernateRouting").body());
            served.add(
                    alice.get("/actuator/metrics/hibernate.routing.statements").body());
        }
        final String everything = output.getAll() + String.join("\n", served);
        assertThat(everything).as("the run printed something").contains("hibernate-routing started");
        for (String secret : List.of(DB_PASSWORD, REPLICA_PASSWORD, REDIS_PASSWORD)) {
            assertThat(everything)
                    .as("lines with a password: %s", linesWith(everything, secret))
                    .doesNotContain(secret);
        }
    }

    /** A login for the application and one for its replica reads, with the passwords above. */
    private static void roles(PostgresCluster cluster) throws Exception {
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement statement = admin.createStatement()) {
            statement.execute("create role " + APP_USER + " login password '" + DB_PASSWORD + "'");
            statement.execute("create role " + REPLICA_USER + " login password '" + REPLICA_PASSWORD + "'");
            statement.execute("grant all on database " + cluster.database() + " to " + APP_USER);
            statement.execute("grant all on schema public to " + APP_USER);
            statement.execute("alter default privileges for role " + APP_USER
                    + " in schema public grant select on tables to " + REPLICA_USER);
            statement.execute("grant usage on schema public to " + REPLICA_USER);
        }
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    private static void awaitDown(Http anonymous) throws Exception {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        HttpResponse<String> replica = anonymous.get("/actuator/health/hibernateRouting/replica1");
        while (!replica.body().contains("\"DEGRADED\"") && System.nanoTime() < deadline) {
            Thread.sleep(50);
            replica = anonymous.get("/actuator/health/hibernateRouting/replica1");
        }
        assertThat(replica.body()).as("replica1 after its standby was killed").contains("\"DEGRADED\"");
    }

    private static String linesWith(String text, String secret) {
        return text.lines().filter(line -> line.contains(secret)).limit(5).collect(Collectors.joining("\n"));
    }
}
