package io.github.hibernaterouting.sample.quarkus;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Read-your-writes and the lost-update check through the packaged sample, two instances of it sharing one Redis,
 * on a real primary and two streaming standbys whose replay the tests pause.
 */
class ReadYourWritesQuarkusIT {

    private static PostgresCluster cluster;
    private static RedisServer redis;
    private static SampleProcess first;
    private static SampleProcess second;

    @BeforeAll
    static void start() {
        cluster = PostgresCluster.builder().standbys(2).start();
        redis = RedisServer.start();
        final Map<String, String> properties = SampleProcess.properties(cluster, redis);
        first = SampleProcess.start("ryw-first", properties);
        second = SampleProcess.start("ryw-second", properties);
        final long id = first.create("alice", "warm-up");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        for (SampleProcess instance : new SampleProcess[] {first, second}) {
            instance.awaitReplicaReads("alice", "/api/notes/" + id);
            instance.awaitReplicaReads("bob", "/api/notes/" + id);
        }
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable closeable : new AutoCloseable[] {first, second, redis, cluster}) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception e) {
                // Closing the rest matters more.
            }
        }
    }

    @AfterEach
    void resume() {
        cluster.resumeAll();
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    @Test
    void aWriteThenAReadByTheSameUser_seesTheWrite_andAnotherUserReadsAPausedReplica() {
        SampleProcess.pauseReplicas(cluster);
        final long id = first.create("alice", "hello");

        final HttpResponse<String> hers = first.send("alice", "GET", "/api/notes/" + id, null);
        final HttpResponse<String> his = first.send("bob", "GET", "/api/notes/" + id, null);

        assertThat(hers.statusCode()).as(hers.body()).isEqualTo(200);
        assertThat(hers.body()).contains("hello");
        assertThat(SampleProcess.servedBy(hers)).isEqualTo("primary");
        assertThat(his.statusCode()).isEqualTo(404);
        assertThat(SampleProcess.servedBy(his)).startsWith("replica");
    }

    @Test
    void aWriteThroughOneInstance_isReadByItsWriterThroughTheOther_whileTheReplicasArePaused() {
        SampleProcess.pauseReplicas(cluster);
        final long id = first.create("alice", "written through the first instance");

        final HttpResponse<String> hers = second.send("alice", "GET", "/api/notes/" + id, null);
        final HttpResponse<String> his = second.send("bob", "GET", "/api/notes/" + id, null);

        assertThat(hers.statusCode()).as(hers.body()).isEqualTo(200);
        assertThat(SampleProcess.servedBy(hers)).isEqualTo("primary");
        assertThat(his.statusCode()).isEqualTo(404);
        assertThat(SampleProcess.servedBy(his)).startsWith("replica");
    }

    @Test
    void aTransactionalIncrement_runsOnThePrimary_andAnswersWithItsCommitPosition() throws SQLException {
        SampleProcess.pauseReplicas(cluster);
        first.send("alice", "PUT", "/api/counters/escalated/increment", null);
        final HttpResponse<String> second = first.send("alice", "PUT", "/api/counters/escalated/increment", null);

        assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
        assertThat(second.body()).contains("\"value\":2");
        assertThat(second.headers().firstValue("X-Consistency-Token")).isPresent();
        assertThat(primaryCount("escalated")).isEqualTo(2);
    }

    @Test
    void anUnversionedUpdateReadOnAPausedReplica_isRefused_andThePrimaryKeepsItsValue() throws SQLException {
        // Read-write transactions that start on a replica, and no filter sending mutations to the primary: the
        // library's check is all that stands between a stale read and a lost update.
        final Map<String, String> properties = SampleProcess.properties(cluster, null);
        properties.put("quarkus.hibernate-routing.transactions", "LAZY");
        properties.put("quarkus.hibernate-routing.web.enabled", "false");
        try (SampleProcess lazy = SampleProcess.start("ryw-lazy", properties)) {
            assertThat(lazy.send("alice", "PUT", "/api/counters/lost/increment", null)
                            .statusCode())
                    .isEqualTo(200);
            SampleProcess.pauseReplicas(cluster);
            assertThat(lazy.send("alice", "PUT", "/api/counters/lost/increment", null)
                            .body())
                    .contains("\"value\":2");

            final HttpResponse<String> stale = lazy.send("alice", "PUT", "/api/counters/lost/increment", null);

            assertThat(stale.statusCode()).as(stale.body()).isEqualTo(409);
            assertThat(stale.body()).contains("\"staleReplicaRead\":true");
            assertThat(primaryCount("lost")).isEqualTo(2);

            resume();
            final HttpResponse<String> after = lazy.send("alice", "PUT", "/api/counters/lost/increment", null);
            assertThat(after.statusCode()).isEqualTo(200);
            assertThat(after.body()).contains("\"value\":3");
        }
    }

    private static long primaryCount(String name) throws SQLException {
        try (Connection connection = cluster.connect(cluster.primary());
                Statement statement = connection.createStatement();
                ResultSet rows =
                        statement.executeQuery("select count_value from counters where name = '" + name + "'")) {
            assertThat(rows.next()).isTrue();
            return rows.getLong(1);
        }
    }
}
