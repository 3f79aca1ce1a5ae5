package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.cfg.AvailableSettings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.LoggerFactory;

/**
 * Actors' stamps carry read-your-writes across instances; a second-level cache local to each
 * instance does not (a write through instance A never reaches B's cache). The bootstrap warns,
 * naming the setting that says the cache is shared, unless it is set or the stamps stay in one
 * instance's memory. A class of its own: closing a persistence unit closes the JCache manager that
 * every persistence unit of the JVM shares.
 */
class LocalCacheWarningIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(1);

    static PostgresCluster cluster;

    @BeforeAll
    static void start(PostgresCluster pg) throws SQLException {
        cluster = pg;
        RoutingItSupport.createSchema(cluster);
        onPrimary(cluster, "create table if not exists users (id text primary key, read_after_write_lsn pg_lsn)");
    }

    @ParameterizedTest(name = "actor_stamps {0}, second_level_cache.shared {1}: warned {2}")
    @CsvSource({"TABLE, , true", "TABLE, true, false", "MEMORY, , false"})
    void aCacheLocalToEachInstance_underStampsThatCrossInstances_isAWarningAtBootstrap(
            String stamps, String shared, boolean warned) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, "true");
        settings.put(AvailableSettings.CACHE_REGION_FACTORY, "jcache");
        settings.put("hibernate.javax.cache.provider", "org.ehcache.jsr107.EhcacheCachingProvider");
        settings.put("hibernate.javax.cache.missing_cache_strategy", "create");
        settings.put(AvailableSettings.CACHE_REGION_PREFIX, "local-cache-warning-" + stamps + shared);
        settings.put(RoutingSettings.ACTOR_STAMPS, stamps);
        if (shared != null) {
            settings.put(RoutingSettings.SECOND_LEVEL_CACHE_SHARED, shared);
        }
        final Logger logger = (Logger) LoggerFactory.getLogger("io.github.hibernaterouting.routing");
        final ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try (EntityManagerFactory ignored =
                RoutingTestSupport.emf("local-cache-warning", cluster, settings, Account.class, Note.class)) {
            final List<String> warnings = logged.list.stream()
                    .filter(e -> e.getLevel() == Level.WARN
                            && e.getFormattedMessage().contains("local to each instance"))
                    .map(ILoggingEvent::getFormattedMessage)
                    .toList();
            if (warned) {
                assertThat(warnings).singleElement().asString().contains(RoutingSettings.SECOND_LEVEL_CACHE_SHARED);
            } else {
                assertThat(warnings).isEmpty();
            }
        } finally {
            logger.detachAppender(logged);
        }
    }
}
