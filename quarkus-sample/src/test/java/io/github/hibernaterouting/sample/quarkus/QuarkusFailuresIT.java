package io.github.hibernaterouting.sample.quarkus;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The packaged sample when things go wrong: a standby killed mid-run, the primary killed, health, bad
 * configuration, and secrets, each on servers of its own.
 */
class QuarkusFailuresIT {
    private static final String PRIMARY_PASSWORD = "Pg-S3cret-7c41e";
    private static final String REDIS_PASSWORD = "Redis-S3cret-93d0a";

    @Test
    void aStandbyKilledMidRun_costsAtMostTheReadInFlight_readinessStaysUp_andItServesAgainOnceBack() throws Exception {
        try (PostgresCluster cluster = PostgresCluster.builder().standbys(2).start();
                SampleProcess sample =
                        SampleProcess.start("failures-standby", SampleProcess.properties(cluster, null))) {
            final long id = sample.create("alice", "read while a standby dies");
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            sample.awaitReplicaReads("bob", "/api/notes/" + id);
            final List<Integer> statuses = new ArrayList<>();
            final AtomicBoolean reading = new AtomicBoolean(true);
            final Thread reader = new Thread(() -> {
                while (reading.get()) {
                    final int status =
                            sample.send("bob", "GET", "/api/notes/" + id, null).statusCode();
                    synchronized (statuses) {
                        statuses.add(status);
                    }
                }
            });
            reader.start();
            awaitReads(statuses, 20);
            cluster.kill(cluster.standby(1));
            sample.awaitReady(body -> body.contains("\"replica1\": \"DEGRADED"), Duration.ofSeconds(60));
            final int killedAt;
            synchronized (statuses) {
                killedAt = statuses.size();
            }
            awaitReads(statuses, killedAt + 50);
            reading.set(false);
            reader.join();

            // A read whose first statement ran on the standby before it died fails (docs/routing.md: a unit of work is
            // not moved once a statement of it ran on the failed replica); every other one is answered.
            assertThat(statuses.stream().filter(status -> status != 200).toList())
                    .as("statuses other than 200 among %d reads", statuses.size())
                    .hasSizeLessThanOrEqualTo(1)
                    .allMatch(status -> status == 500);
            assertThat(statuses.subList(killedAt, statuses.size())).containsOnly(200);
            for (int i = 0; i < 10; i++) {
                assertThat(SampleProcess.servedBy(sample.send("bob", "GET", "/api/notes/" + id, null)))
                        .isNotEqualTo("replica1");
            }
            assertThat(sample.send(null, "GET", "/q/health/ready", null).statusCode())
                    .isEqualTo(200);
            assertThat(sample.send(null, "GET", "/q/health/live", null).statusCode())
                    .isEqualTo(200);

            cluster.start(cluster.standby(1));
            sample.awaitReady(body -> body.contains("\"replica1\": \"UP"), Duration.ofSeconds(60));
            final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!SampleProcess.servedBy(sample.send("bob", "GET", "/api/notes/" + id, null))
                    .equals("replica1")) {
                assertThat(System.nanoTime()).as("reads reach replica1 again").isLessThan(deadline);
            }
        }
    }

    @Test
    void strictHealth_makesReadinessDown_forAStandbyDown_butNotLiveness() {
        try (PostgresCluster cluster = PostgresCluster.builder().standbys(1).start()) {
            final Map<String, String> properties = SampleProcess.properties(cluster, null);
            properties.put("quarkus.hibernate-routing.health.strict", "true");
            try (SampleProcess sample = SampleProcess.start("failures-strict", properties)) {
                assertThat(sample.send(null, "GET", "/q/health/ready", null).statusCode())
                        .isEqualTo(200);
                cluster.kill(cluster.standby(1));
                sample.awaitReady(body -> body.contains("\"replica1\": \"DEGRADED"), Duration.ofSeconds(60));

                assertThat(sample.send(null, "GET", "/q/health/ready", null).statusCode())
                        .isEqualTo(503);
                assertThat(sample.send(null, "GET", "/q/health/live", null).statusCode())
                        .isEqualTo(200);

                cluster.kill(cluster.primary());
                final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (sample.send(null, "GET", "/q/health/ready", null).statusCode() != 503) {
                    assertThat(System.nanoTime()).as("readiness down").isLessThan(deadline);
                }
                assertThat(sample.send(null, "GET", "/q/health/live", null).statusCode())
                        .isEqualTo(200);
            }
        }
    }

    @Test
    void aPrimaryDown_makesReadinessDown_throughTheDatasourceCheck_andLivenessStaysUp() {
        try (PostgresCluster cluster = PostgresCluster.builder().standbys(1).start();
                SampleProcess sample =
                        SampleProcess.start("failures-primary", SampleProcess.properties(cluster, null))) {
            cluster.kill(cluster.primary());
            final long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (sample.send(null, "GET", "/q/health/ready", null).statusCode() != 503) {
                assertThat(System.nanoTime())
                        .as("readiness down without the primary")
                        .isLessThan(deadline);
            }
            assertThat(sample.send(null, "GET", "/q/health/live", null).statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void badConfiguration_stopsTheStart_namingTheKey() {
        try (PostgresCluster cluster = PostgresCluster.builder().standbys(1).start()) {
            final Map<String, String> misspelt = SampleProcess.properties(cluster, null);
            misspelt.put("quarkus.hibernate-routing.settings.max-replica-lagg", "2s");
            assertThat(SampleProcess.startFailing("bad-key", misspelt))
                    .contains("quarkus.hibernate-routing.settings.max-replica-lagg")
                    .contains("did you mean 'quarkus.hibernate-routing.settings.max_replica_lag'");

            final Map<String, String> both = SampleProcess.properties(cluster, null);
            both.put("quarkus.hibernate-routing.replica-datasources", "replica1");
            assertThat(SampleProcess.startFailing("bad-both", both))
                    .contains("quarkus.hibernate-routing.replica-datasources")
                    .contains("quarkus.hibernate-routing.replica-urls");

            final Map<String, String> rules = SampleProcess.properties(cluster, null);
            rules.put("quarkus.hibernate-routing.web.rules", "GET /reports/**");
            assertThat(SampleProcess.startFailing("bad-rules", rules)).contains("quarkus.hibernate-routing.web.rules");

            final Map<String, String> value = SampleProcess.properties(cluster, null);
            value.put("quarkus.hibernate-routing.settings.max-replica-lag", "soon");
            assertThat(SampleProcess.startFailing("bad-value", value))
                    .contains("hibernate.routing.max_replica_lag")
                    .contains("soon");
        }
    }

    @Test
    void noSecret_appearsInTheOutputOrTheAnswers_throughFailures() {
        final RedisServer redis = RedisServer.start();
        // After the start, whose readiness check pings without a password.
        assertThat(redis.query("CONFIG SET requirepass " + REDIS_PASSWORD)).isEqualTo("+OK");
        try (redis;
                PostgresCluster cluster = PostgresCluster.builder()
                        .standbys(2)
                        .password(PRIMARY_PASSWORD)
                        .start()) {
            final Map<String, String> properties = SampleProcess.properties(cluster, null);
            properties.put(
                    "quarkus.hibernate-routing.redis-uri", "redis://:" + REDIS_PASSWORD + "@127.0.0.1:" + redis.port());
            properties.put("quarkus.log.category.\"io.github.hibernaterouting\".level", "DEBUG");
            properties.put("quarkus.log.category.\"com.zaxxer.hikari\".level", "DEBUG");
            final StringBuilder seen = new StringBuilder();
            try (SampleProcess sample = SampleProcess.start("secrets", properties)) {
                final long id = sample.create("alice", "secret-free");
                seen.append(
                        sample.send("alice", "GET", "/api/notes/" + id, null).body());
                cluster.kill(cluster.standby(1));
                sample.awaitReady(body -> body.contains("\"replica1\": \"DEGRADED"), Duration.ofSeconds(60));
                for (int i = 0; i < 5; i++) {
                    seen.append(
                            sample.send("bob", "GET", "/api/notes/" + id, null).body());
                }
                seen.append(sample.send(null, "GET", "/q/health/ready", null).body());
                seen.append(sample.send("alice", "GET", "/api/status", null).body());
                seen.append(sample.send(null, "GET", "/q/metrics", null).body());
                seen.append(sample.output());
            }
            // A wrong replica password: the replicas refuse the connections, which the log reports without it.
            final Map<String, String> wrong = SampleProcess.properties(cluster, null);
            wrong.put("quarkus.hibernate-routing.replica-password", "Wrong-S3cret-1b2c");
            try (SampleProcess refused = SampleProcess.start("secrets-refused", wrong)) {
                seen.append(refused.send("bob", "GET", "/api/notes", null).body());
                refused.awaitOutput("password authentication failed", Duration.ofSeconds(60));
                seen.append(refused.output());
            }

            assertThat(seen.toString())
                    .contains("secret-free")
                    .doesNotContain(PRIMARY_PASSWORD)
                    .doesNotContain(REDIS_PASSWORD)
                    .doesNotContain("Wrong-S3cret-1b2c");
        }
    }

    private static void awaitReads(List<Integer> statuses, int count) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (true) {
            synchronized (statuses) {
                if (statuses.size() >= count) {
                    return;
                }
            }
            assertThat(System.nanoTime()).as("%d reads answered", count).isLessThan(deadline);
            Thread.onSpinWait();
        }
    }
}
