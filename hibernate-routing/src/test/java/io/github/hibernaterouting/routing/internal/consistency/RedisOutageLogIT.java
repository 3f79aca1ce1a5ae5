package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.testkit.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A Redis outage is logged once as it begins (WARN) and once as it ends (INFO), not once per
 * request: the reads and stores that fail in between log at DEBUG. A real Redis, stopped and
 * started again; every log line of the marker and the stamps captured.
 */
class RedisOutageLogIT {
    private static final Duration WINDOW = Duration.ofSeconds(10);
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private final Logger logger = (Logger) LoggerFactory.getLogger(RedisMarker.class.getPackageName());
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private Level level;

    @BeforeEach
    void capture() {
        level = logger.getLevel();
        logger.setLevel(Level.DEBUG);
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logged);
        logger.setLevel(level);
    }

    @Test
    void redisOutage_logsOneWarningAsItBegins_andOneInfoAsItEnds_notOnePerRequest() throws Exception {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final RoutingMetrics metrics = new RoutingMetrics(meters, "default", List.of());
        try (RedisServer redis = RedisServer.start();
                ActorStamps stamps = new ActorStamps(
                        Duration.ofMinutes(1),
                        100_000,
                        null,
                        new RedisMarker(redis.uri(), "t", WINDOW, Duration.ofSeconds(1), metrics),
                        null,
                        metrics)) {
            stamps.beforeMutation("actor");
            assertThat(circuit(meters)).as("breaker closed").isZero();

            redis.stop();
            for (int i = 0; i < 20; i++) {
                assertThat(stamps.minimumFor("actor"))
                        .as("read #%d while Redis is down: the primary", i)
                        .isEqualTo(ActorStamps.PRIMARY_ONLY);
            }
            for (int i = 0; i < 5; i++) {
                assertThatThrownBy(() -> stamps.beforeMutation("actor"))
                        .as("store #%d while Redis is down: refused", i)
                        .isInstanceOf(RedisMarker.Unavailable.class);
            }
            assertThat(lines(Level.WARN))
                    .as("one warning for the outage, not one per request")
                    .singleElement()
                    .asString()
                    .contains("until it answers");
            assertThat(lines(Level.DEBUG))
                    .as("each failure of the outage at DEBUG")
                    .hasSizeGreaterThanOrEqualTo(24);
            assertThat(circuit(meters))
                    .as("breaker open or half-open during the outage")
                    .isNotZero();

            redis.restart();
            awaitStored(stamps);
            assertThat(lines(Level.WARN)).as("no warning while it came back").hasSize(1);
            assertThat(lines(Level.INFO).stream().filter(line -> line.contains("answers again")))
                    .as("one line says the outage ended, with what it cost")
                    .singleElement()
                    .asString()
                    .contains("commands failed or were refused");
            assertThat(circuit(meters)).as("breaker closed once Redis answers").isZero();

            redis.stop();
            for (int i = 0; i < 5; i++) {
                stamps.minimumFor("actor");
            }
            assertThat(lines(Level.WARN))
                    .as("a second outage: a second warning")
                    .hasSize(2);
        }
    }

    /** Stores a pending marker, polling while Redis refuses it (bounded). */
    private static void awaitStored(ActorStamps stamps) {
        final long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (true) {
            try {
                stamps.beforeMutation("actor");
                return;
            } catch (RedisMarker.Unavailable e) {
                assertThat(System.nanoTime())
                        .as("a store succeeds within %s of Redis answering again: %s", DEADLINE, e.getMessage())
                        .isLessThan(deadline);
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // the poll interval
            }
        }
    }

    private static double circuit(SimpleMeterRegistry meters) {
        return meters.get("hibernate.routing.redis.circuit.state").gauge().value();
    }

    private List<String> lines(Level at) {
        return logged.list.stream()
                .filter(event -> event.getLevel() == at)
                .map(ILoggingEvent::getFormattedMessage)
                .toList();
    }
}
