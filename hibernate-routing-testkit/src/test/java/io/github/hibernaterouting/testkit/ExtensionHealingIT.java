package io.github.hibernaterouting.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One test leaves faults behind; the extension's afterEach must heal them before the next test. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExtensionHealingIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER =
            PostgresClusterExtension.withStandbys(2).withRedis();

    @Test
    @Order(1)
    void aTest_leavesStoppedNodesAndPausedReplayBehind(PostgresCluster pg, RedisServer redis) {
        pg.pauseReplay(pg.standby(1));
        pg.stop(pg.standby(2));
        pg.stop(pg.primary());
        redis.stop();
    }

    @Test
    @Order(2)
    void theNextTest_findsEverythingRunningAndReplaying(PostgresCluster pg, RedisServer redis) {
        assertThat(pg.nodes()).allMatch(pg::isRunning);
        assertThat(pg.isReplayPaused(pg.standby(1))).isFalse();
        assertThat(redis.isRunning()).isTrue();
        pg.awaitCaughtUp(java.time.Duration.ofSeconds(30));
        assertThat(CLUSTER.cluster()).isSameAs(pg);
    }
}
