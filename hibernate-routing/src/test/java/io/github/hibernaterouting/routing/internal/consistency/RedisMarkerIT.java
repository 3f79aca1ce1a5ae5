package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The marker's scripts on a real Redis (6.2, the test kit's): pending entries per mutation, the
 * raise that removes only its own, markers written by an older version, and the alive key. Each
 * test uses a prefix of its own, whose alive key it makes for the running Redis process and long
 * ago, so that no start-up window applies unless the test wants one.
 */
class RedisMarkerIT {
    private static final Duration WINDOW = Duration.ofSeconds(10);

    static RedisServer redis;
    static RedisClient client;
    static StatefulRedisConnection<String, String> connection;

    private String prefix;
    private RedisMarker marker;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        client = RedisClient.create(redis.uri());
        connection = client.connect();
    }

    @AfterAll
    static void stop() {
        if (connection != null) {
            connection.close();
        }
        if (client != null) {
            client.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @BeforeEach
    void marker() {
        prefix = "t-" + UUID.randomUUID();
        redis().hset(prefix + ":alive", Map.of("run_id", runId(), "since", "0"));
        marker = new RedisMarker(redis.uri(), prefix, WINDOW, Duration.ofSeconds(1));
    }

    @AfterEach
    void closeMarker() {
        marker.close();
    }

    private static RedisCommands<String, String> redis() {
        return connection.sync();
    }

    private static String runId() {
        return RedisMarker.runId(redis().info("server"));
    }

    @Test
    void concurrentMutations_eachRaiseRemovesOnlyItsOwnPendingEntry_andNeverLowersThePosition() throws Exception {
        final String first = marker.markPending("a");
        final String second = marker.markPending("a");
        assertThat(first).isNotEqualTo(second);
        assertThat(marker.read("a")).isEqualTo(ActorStamps.PENDING);

        marker.raise("a", 0x500, List.of(first));
        assertThat(marker.read("a")).as("the second mutation is still pending").isEqualTo(ActorStamps.PENDING);
        assertThat(redis().hkeys(marker.key("a"))).containsExactlyInAnyOrder("lsn", "pending:" + second);

        marker.raise("a", 0x300, List.of(second));
        assertThat(marker.read("a")).as("never lowered").isEqualTo(0x500);
        assertThat(redis().hkeys(marker.key("a"))).containsExactly("lsn");
        assertThat(redis().pttl(marker.key("a")))
                .as("each raise restarts the window")
                .isBetween(1L, WINDOW.toMillis());
        assertThat(marker.read("b")).as("no marker").isEqualTo(Lsn.UNKNOWN);
    }

    @Test
    void pendingEntryPastItsWindow_noLongerCounts_andTheNextWriteRemovesIt() throws Exception {
        final String key = marker.key("a");
        marker.raise("a", 0x500, List.of());
        redis().hset(key, "pending:abandoned", "1");
        assertThat(marker.read("a")).isEqualTo(0x500);

        final String pending = marker.markPending("a");
        assertThat(redis().hkeys(key)).containsExactlyInAnyOrder("lsn", "pending:" + pending);
    }

    @Test
    void markersOfAnOlderVersion_areRead_andKeptWhenTheNewLayoutTakesOver() throws Exception {
        redis().set(marker.key("pending"), MarkerScripts.PENDING, SetArgs.Builder.px(WINDOW.toMillis()));
        redis().set(marker.key("position"), RedisMarker.hex(0x700), SetArgs.Builder.px(WINDOW.toMillis()));
        assertThat(marker.read("pending")).isEqualTo(ActorStamps.PENDING);
        assertThat(marker.read("position")).isEqualTo(0x700);

        marker.raise("pending", 0x500, List.of());
        assertThat(marker.read("pending"))
                .as("the older version's pending mutation still counts")
                .isEqualTo(ActorStamps.PENDING);
        final String id = marker.markPending("position");
        marker.raise("position", 0x500, List.of(id));
        assertThat(marker.read("position"))
                .as("the older version's position is kept")
                .isEqualTo(0x700);
    }

    @Test
    void aliveKeyOfAnotherRedisProcess_orMissing_startsAWindowOnThePrimary() throws Exception {
        marker.raise("a", 0x500, List.of());
        assertThat(marker.read("a")).isEqualTo(0x500);

        redis().hset(prefix + ":alive", "run_id", "0000000000000000000000000000000000000000");
        assertThat(marker.read("a"))
                .as("restored or failed over: another process made the alive key")
                .isEqualTo(ActorStamps.PRIMARY_ONLY);
        assertThat(redis().hget(prefix + ":alive", "run_id")).isEqualTo(runId());
        assertThat(marker.read("a")).as("for the whole window").isEqualTo(ActorStamps.PRIMARY_ONLY);

        redis().del(prefix + ":alive");
        redis().set(prefix + ":alive", "0");
        assertThat(marker.read("a"))
                .as("an older version's alive key names no process")
                .isEqualTo(ActorStamps.PRIMARY_ONLY);
        assertThat(redis().hgetall(prefix + ":alive")).containsOnlyKeys("run_id", "since");
    }
}
