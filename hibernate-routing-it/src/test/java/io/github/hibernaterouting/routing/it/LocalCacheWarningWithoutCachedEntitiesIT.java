package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.jpa.HibernateHints;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * The warning about a second-level cache local to each instance ({@link LocalCacheWarningIT}) needs something
 * cached: with the cache switched on (as Quarkus does by default) but no cacheable entity, no cached collection and
 * no natural-id cache, no entry can go stale, so stamps that cross instances are no reason to warn. The query cache
 * caches results all the same, so with it on the warning comes. {@link Book} is the persistence unit's one entity,
 * without {@code @Cacheable}. A class of its own, as {@link LocalCacheWarningIT} is: closing a persistence unit closes
 * the JCache manager that every persistence unit of the JVM shares.
 */
class LocalCacheWarningWithoutCachedEntitiesIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(1);

    static PostgresCluster cluster;

    private final Logger logger = (Logger) LoggerFactory.getLogger("io.github.hibernaterouting.routing");
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeAll
    static void start(PostgresCluster pg) throws SQLException {
        cluster = pg;
        onPrimary(cluster, "create table if not exists users (id text primary key, read_after_write_lsn pg_lsn)");
        onPrimary(
                cluster,
                "drop table if exists book cascade; create table book (id bigint primary key, title text);"
                        + " insert into book values (1, 'one'), (2, 'two')");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    @BeforeEach
    void captureTheLog() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void stopCapturing() {
        logger.detachAppender(logged);
    }

    /**
     * A persistence unit of {@link Book} alone, with a real second-level cache provider (JCache on Ehcache, as
     * {@link LocalCacheWarningIT} configures it) and the actors' stamps in a table, which cross instances.
     */
    private static EntityManagerFactory uncachedEntitiesUnit(boolean queryCache) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, "true");
        settings.put(AvailableSettings.USE_QUERY_CACHE, Boolean.toString(queryCache));
        settings.put(AvailableSettings.CACHE_REGION_FACTORY, "jcache");
        settings.put("hibernate.javax.cache.provider", "org.ehcache.jsr107.EhcacheCachingProvider");
        settings.put("hibernate.javax.cache.missing_cache_strategy", "create");
        settings.put(AvailableSettings.CACHE_REGION_PREFIX, "local-cache-warning-uncached-" + queryCache);
        settings.put(RoutingSettings.ACTOR_STAMPS, "TABLE");
        return RoutingTestSupport.emf("local-cache-warning-uncached", cluster, settings, Book.class);
    }

    private List<String> localCacheWarnings() {
        return logged.list.stream()
                .filter(e ->
                        e.getLevel() == Level.WARN && e.getFormattedMessage().contains("local to each instance"))
                .map(ILoggingEvent::getFormattedMessage)
                .toList();
    }

    @Test
    void theSecondLevelCacheOn_withNothingCacheable_isNoWarning_atBootstrapNorOnReads() {
        try (EntityManagerFactory emf = uncachedEntitiesUnit(false)) {
            assertThat(localCacheWarnings()).as("at bootstrap").isEmpty();
            Routing.run(Strategy.PRIMARY, () -> {
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(em.find(Book.class, 1L)).isNotNull();
                    assertThat(em.createQuery("select b from Book b", Book.class)
                                    .getResultList())
                            .hasSize(2);
                }
            });
            assertThat(localCacheWarnings())
                    .as("after a find and a query on the primary")
                    .isEmpty();
        }
    }

    @Test
    void theQueryCacheOn_withNoCacheableEntity_isTheWarning_onceAQueryResultIsCached() {
        try (EntityManagerFactory emf = uncachedEntitiesUnit(true)) {
            Routing.run(Strategy.PRIMARY, () -> {
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(em.createQuery("select b from Book b", Book.class)
                                    .setHint(HibernateHints.HINT_CACHEABLE, true)
                                    .getResultList())
                            .hasSize(2);
                }
            });
            assertThat(localCacheWarnings())
                    .as("a query result is cached in a cache local to the instance")
                    .singleElement()
                    .asString()
                    .contains(RoutingSettings.SECOND_LEVEL_CACHE_SHARED);
        }
    }
}
