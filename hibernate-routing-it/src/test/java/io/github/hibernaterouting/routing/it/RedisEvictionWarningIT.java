package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.LoggerFactory;

/**
 * A Redis that may evict keys loses markers inside their windows without anyone noticing (the alive
 * key has no TTL, so {@code volatile-*} policies spare it): the library says so, as an error, when it
 * connects to one, and says nothing about a Redis that never evicts. A real Redis, its policy set
 * with {@code CONFIG SET}.
 */
@ExtendWith(RoutingLeakCheck.class)
class RedisEvictionWarningIT {
    @RegisterExtension
    static final PostgresClusterExtension DB =
            PostgresClusterExtension.withStandbys(1).withRedis();

    private static final String MARKER_LOGGER = "io.github.hibernaterouting.routing.internal.consistency.RedisMarker";

    static PostgresCluster cluster;

    @BeforeAll
    static void schema() throws SQLException {
        cluster = DB.cluster();
        createSchema(cluster);
    }

    @AfterEach
    void neverEvict() {
        redisConfig("noeviction", "0");
    }

    private static void redisConfig(String policy, String maxmemory) {
        final RedisClient client = RedisClient.create(DB.redis().uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            connection.sync().configSet("maxmemory-policy", policy);
            connection.sync().configSet("maxmemory", maxmemory);
        } finally {
            client.shutdown();
        }
    }

    @ParameterizedTest(name = "maxmemory-policy {0}, maxmemory {1}: warned {2}")
    @CsvSource({
        "volatile-lru, 64mb, true",
        "allkeys-lru, 64mb, true",
        "volatile-ttl, 64mb, true",
        "noeviction, 64mb, false",
        // No memory limit: nothing is ever evicted, whatever the policy.
        "allkeys-lru, 0, false"
    })
    void connectingToARedisThatEvicts_isAnError_thatNamesThePolicyAndTheFix(
            String policy, String maxmemory, boolean warned) {
        redisConfig(policy, maxmemory);
        final Logger logger = (Logger) LoggerFactory.getLogger(MARKER_LOGGER);
        final ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try (EntityManagerFactory ignored =
                emf(cluster, Map.of(RoutingSettings.REDIS_URI, DB.redis().uri()))) {
            final List<ILoggingEvent> errors = logged.list.stream()
                    .filter(e -> e.getLevel() == Level.ERROR
                            && e.getFormattedMessage().contains("evicts keys"))
                    .toList();
            if (warned) {
                assertThat(errors).as("the error at connect").hasSize(1);
                assertThat(errors.get(0).getFormattedMessage())
                        .contains("maxmemory-policy " + policy)
                        .contains("noeviction")
                        .doesNotContain("password");
            } else {
                assertThat(errors).as("no eviction possible: no error").isEmpty();
            }
        } finally {
            logger.detachAppender(logged);
        }
    }
}
