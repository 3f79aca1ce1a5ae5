package io.github.hibernaterouting.sample.quarkus;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the extension adds beyond the request filter, through the packaged sample on a real primary, two streaming
 * standbys and Redis: context propagation, {@code @ReadOnly}, {@code @RoutingStrategy}, sessions without a request
 * context, and the filter's headers.
 */
class QuarkusExtensionIT {

    private static PostgresCluster cluster;
    private static RedisServer redis;
    private static SampleProcess sample;

    @BeforeAll
    static void start() {
        cluster = PostgresCluster.builder().standbys(2).start();
        redis = RedisServer.start();
        sample = SampleProcess.start("extension", SampleProcess.properties(cluster, redis));
        final long id = sample.create("alice", "warm-up");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        sample.awaitReplicaReads("alice", "/api/notes/" + id);
        sample.awaitReplicaReads("bob", "/api/notes/" + id);
    }

    @AfterAll
    static void stop() {
        if (sample != null) {
            sample.close();
        }
        if (redis != null) {
            redis.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void resume() {
        cluster.resumeAll();
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    @Test
    void aReadOnAManagedExecutorThread_keepsTheRequestsActor_soItSeesHerWrite_whileTheReplicasArePaused() {
        SampleProcess.pauseReplicas(cluster);
        final long id = sample.create("alice", "written while the replicas are paused");

        final HttpResponse<String> hers = sample.send("alice", "GET", "/api/notes/" + id + "/async", null);
        final HttpResponse<String> his = sample.send("bob", "GET", "/api/notes/" + id + "/async", null);

        assertThat(hers.statusCode()).as(hers.body()).isEqualTo(200);
        assertThat(SampleProcess.servedBy(hers)).isEqualTo("primary");
        // Another actor, on a paused replica: the scope on the executor's thread is his, and it does read a replica.
        assertThat(his.statusCode()).isEqualTo(404);
        assertThat(SampleProcess.servedBy(his)).startsWith("replica");
    }

    @Test
    void aReadOnlyTransaction_readsOnAReplica_underTransactionsPrimary() {
        sample.create("alice", "a note");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));

        final HttpResponse<String> mine = sample.send("alice", "GET", "/api/notes", null);

        assertThat(mine.statusCode()).as(mine.body()).isEqualTo(200);
        assertThat(SampleProcess.servedBy(mine)).startsWith("replica");
    }

    @Test
    void aReadOnlyTransaction_readsTheActorsWriteOnThePrimary_whileTheReplicasArePaused() {
        SampleProcess.pauseReplicas(cluster);
        sample.create("alice", "the latest, not replayed");

        final HttpResponse<String> mine = sample.send("alice", "GET", "/api/notes", null);

        assertThat(mine.statusCode()).as(mine.body()).isEqualTo(200);
        assertThat(mine.body()).contains("the latest, not replayed");
        assertThat(SampleProcess.servedBy(mine)).isEqualTo("primary");
    }

    @Test
    void routingStrategyOnAResourceMethod_sendsItsReadsToThePrimary_andOthersStayOnReplicas() {
        final long id = sample.create("alice", "fresh");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));

        assertThat(SampleProcess.servedBy(sample.send("bob", "GET", "/api/notes/" + id + "/fresh", null)))
                .isEqualTo("primary");
        assertThat(SampleProcess.servedBy(sample.send("bob", "GET", "/api/notes/" + id, null)))
                .startsWith("replica");
    }

    @Test
    void aTransactionOnAThreadOfTheApplicationsOwn_withoutARequestContext_runs() {
        sample.awaitOutput("Startup report: ", Duration.ofSeconds(60));

        assertThat(sample.output()).doesNotContain("Startup report failed").doesNotContain("no tenant identifier");
    }

    @Test
    void aMutation_answersWithItsCommitPosition_andEveryResponseCarriesTheRequestId() {
        final HttpResponse<String> created =
                sample.send("alice", "POST", "/api/notes", "{\"text\":\"tokened\"}", "X-Request-Id", "req-42");

        assertThat(created.statusCode()).isEqualTo(201);
        assertThat(created.headers().firstValue("X-Consistency-Token"))
                .hasValueSatisfying(token -> assertThat(token).matches("rl1\\.[0-9a-f]{16}"));
        assertThat(created.headers().firstValue("X-Request-Id")).hasValue("req-42");
        assertThat(sample.send("bob", "GET", "/api/notes", null).headers().firstValue("X-Request-Id"))
                .isPresent();
    }

    @Test
    void anotherUserWithTheWritersToken_readsTheWrite_whileTheReplicasArePaused() {
        SampleProcess.pauseReplicas(cluster);
        final HttpResponse<String> created =
                sample.send("alice", "POST", "/api/notes", "{\"text\":\"shared by link\"}");
        final String token = created.headers().firstValue("X-Consistency-Token").orElseThrow();
        final long id = SampleProcess.id(created);

        final HttpResponse<String> withToken =
                sample.send("bob", "GET", "/api/notes/" + id, null, "X-Consistency-Token", token);
        final HttpResponse<String> without = sample.send("bob", "GET", "/api/notes/" + id, null);

        assertThat(withToken.statusCode()).isEqualTo(200);
        assertThat(SampleProcess.servedBy(withToken)).isEqualTo("primary");
        assertThat(without.statusCode()).isEqualTo(404);
    }

    @Test
    void badHeaders_areA400NamingTheHeader() {
        final HttpResponse<String> forced = sample.send("bob", "GET", "/api/notes", null, "X-Force-Primary", "maybe");
        final HttpResponse<String> token =
                sample.send("bob", "GET", "/api/notes", null, "X-Consistency-Token", "0/FFFFFFFF");
        final HttpResponse<String> ahead =
                sample.send("bob", "GET", "/api/notes", null, "X-Consistency-Token", "rl1.7fffffffffffffff");

        assertThat(forced.statusCode()).isEqualTo(400);
        assertThat(forced.body()).contains("X-Force-Primary");
        assertThat(token.statusCode()).isEqualTo(400);
        assertThat(token.body()).contains("X-Consistency-Token");
        assertThat(ahead.statusCode()).isEqualTo(400);
        assertThat(ahead.body()).contains("X-Consistency-Token");
    }
}
