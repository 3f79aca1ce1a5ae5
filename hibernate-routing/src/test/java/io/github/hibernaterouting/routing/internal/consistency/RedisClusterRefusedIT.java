package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Redis Cluster is refused: the marker's scripts touch an actor's marker and the alive key
 * together, which a cluster allows only within one hash slot. A real Redis in cluster mode (one
 * node is enough for {@code INFO cluster} to say {@code cluster_enabled:1}).
 */
class RedisClusterRefusedIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    private static RedisServer clusterNode() {
        return RedisServer.start(List.of("--cluster-enabled", "yes"));
    }

    @Test
    void clusterAtBootstrap_failsTheStart_namingTheSettingAndWhatToUseInstead() {
        try (RedisServer redis = clusterNode()) {
            assertThatThrownBy(() ->
                            new RedisMarker(redis.uri(), "hibernate-routing", Duration.ofSeconds(10), TIMEOUT).close())
                    .isInstanceOf(RoutingConfigurationException.class)
                    .hasMessageContaining("hibernate.routing.redis.uri")
                    .hasMessageContaining("cluster mode")
                    .hasMessageContaining("does not support")
                    .hasMessageContaining("Sentinel")
                    .hasMessageContaining("standalone");
        }
    }

    @Test
    void clusterNoticedAfterBootstrap_makesTheMarkerUnavailable_andSaysWhy() throws Exception {
        final Logger logger = (Logger) LoggerFactory.getLogger(RedisMarker.class);
        final ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try (RedisServer redis = clusterNode()) {
            redis.stop();
            // Redis down at bootstrap is not fatal: the start goes on.
            try (RedisMarker marker =
                    new RedisMarker(redis.uri(), "hibernate-routing", Duration.ofSeconds(10), TIMEOUT)) {
                redis.restart();
                // The marker tries to connect at most once per timeout: poll until it reached the cluster.
                final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (true) {
                    final RedisMarker.Unavailable e = readFails(marker);
                    if (e.getMessage().contains("cluster mode")) {
                        assertThat(e.getMessage()).contains("hibernate.routing.redis.uri");
                        break;
                    }
                    assertThat(System.nanoTime())
                            .as("the marker reaches the cluster within 30 s: %s", e.getMessage())
                            .isLessThan(deadline);
                    LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // the poll interval
                }
                assertThatThrownBy(() -> marker.markPending("a"))
                        .as("a mutation's store fails, so the mutation is refused")
                        .isInstanceOf(RedisMarker.Unavailable.class);
                assertThat(logged.list.stream()
                                .filter(event -> event.getLevel() == Level.ERROR)
                                .map(ILoggingEvent::getFormattedMessage)
                                .filter(message -> message.contains("cluster mode")))
                        .as("the reason is logged as an error, once")
                        .hasSize(1);
            }
        } finally {
            logger.detachAppender(logged);
        }
    }

    private static RedisMarker.Unavailable readFails(RedisMarker marker) {
        try {
            final long position = marker.read("a");
            throw new AssertionError("a marker read from a Redis Cluster succeeded: " + position);
        } catch (RedisMarker.Unavailable e) {
            return e;
        }
    }
}
