package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import org.hibernate.Cache;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.jpa.HibernateHints;
import org.hibernate.stat.Statistics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The second-level, collection, natural-id and query caches with routing, on a real cache provider
 * (Hibernate's JCache integration on Ehcache 3), a real primary and two streaming standbys.
 *
 * <p>Two ways a cache can serve stale data under routing, each checked for every kind of cache: a
 * cache split by connection identifier, where a unit of work that starts as {@code "primary"}
 * updates only its own copy while {@code "replica"} sessions keep reading theirs; and a session that
 * reads an old state from a lagging replica and puts it into the cache, where it outlives the lag.
 * Rows are created on the primary behind Hibernate's back (nothing cached) unless a test says
 * otherwise; replay is paused on the standbys to make them lag deterministically.
 */
@ExtendWith(RoutingLeakCheck.class)
class SecondLevelCacheIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    private static final long ID = 900_001L;
    private static final String TAGS = Author.class.getName() + ".tags";
    private static final String NOTE_TEXTS = "select n.text from Note n order by n.text";

    static PostgresCluster cluster;
    static EntityManagerFactory cached;

    @BeforeAll
    static void start(PostgresCluster pg) throws SQLException {
        cluster = pg;
        RoutingItSupport.createSchema(cluster);
        onPrimary(
                cluster,
                "drop table if exists author_tag, author cascade; drop sequence if exists author_seq;"
                        + " create sequence author_seq start 1 increment 50;"
                        + " create table author (id bigint primary key, email text not null unique, name text);"
                        + " create table author_tag (author_id bigint not null references author, tag text not null)");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        final Map<String, Object> settings = new HashMap<>();
        settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, "true");
        settings.put(AvailableSettings.USE_QUERY_CACHE, "true");
        settings.put(AvailableSettings.CACHE_REGION_FACTORY, "jcache");
        settings.put("hibernate.javax.cache.provider", "org.ehcache.jsr107.EhcacheCachingProvider");
        settings.put("hibernate.javax.cache.missing_cache_strategy", "create");
        settings.put(AvailableSettings.CACHE_REGION_PREFIX, "second-level-cache-it");
        settings.put(AvailableSettings.GENERATE_STATISTICS, "true");
        // The paused standbys must serve the default sessions however long a test takes on this machine.
        settings.put(RoutingSettings.MAX_REPLICA_LAG, RoutingItSupport.LAG_BOUND_NO_TEST_REACHES);
        cached = RoutingTestSupport.emf(
                "second-level-cache-it", cluster, settings, Account.class, Note.class, Author.class);
    }

    @AfterAll
    static void stop() {
        if (cached != null) {
            cached.close();
        }
    }

    @BeforeEach
    void emptyTablesAndCaches() throws SQLException {
        cluster.resumeAll();
        onPrimary(cluster, "delete from account; delete from note; delete from author_tag; delete from author");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        awaitReplicasUp(cached);
        runtime(cached).checkReplicasNow();
        // Every region: the rows were deleted behind Hibernate's back (JPA's evictAll evicts entities only).
        cache().evictAllRegions();
        statistics().clear();
    }

    @AfterEach
    void resumeReplay() {
        cluster.resumeAll();
    }

    // ---- entities -------------------------------------------------------------------------------

    @Test
    void writeInAPrimaryScope_isReadByDefaultSessions_onceTheStandbysReplayedIt() throws SQLException {
        onPrimary(cluster, "insert into note (id, text) values (" + ID + ", 'v1')");
        catchUp();
        assertThat(readNote(ID))
                .as("a default session reads the note from a replica")
                .isEqualTo("v1");

        Routing.run(Strategy.PRIMARY, () -> updateNote(ID, "v2"));
        catchUp();

        assertThat(readNote(ID))
                .as("a default session after both standbys replayed the update")
                .isEqualTo("v2");
    }

    @Test
    void cacheHit_thenAReadOnALaggingReplica_inOneUnitOfWork_neverGoesBackInTime() throws SQLException {
        onPrimary(cluster, "insert into note (id, text) values (" + ID + ", 'v1')");
        catchUp();
        pauseBothStandbys();
        updateNote(ID, "v2");
        assertThat(readNoteOnThePrimary(ID))
                .as("read on the primary, which fills the cache")
                .isEqualTo("v2");
        statistics().clear();

        try (EntityManager em = cached.createEntityManager()) {
            assertThat(em.find(Note.class, ID).text).isEqualTo("v2");
            assertThat(statistics().getSecondLevelCacheHitCount())
                    .as("the find was served by the cache")
                    .isEqualTo(1);
            assertThat(em.createQuery("select n.text from Note n where n.id = :id", String.class)
                            .setParameter("id", ID)
                            .getSingleResult())
                    .as("a query of the same unit of work after the cache hit, while both standbys lack v2")
                    .isEqualTo("v2");
        }
    }

    @Test
    void writeInAPrimarySession_isReadByDefaultSessions_onceTheStandbysReplayedIt() throws SQLException {
        onPrimary(cluster, "insert into account (id, name, balance, version) values (" + ID + ", 'a', 100, 0)");
        catchUp();
        assertThat(readBalance(ID)).isEqualTo(100);

        try (Session session = cached.unwrap(SessionFactory.class)
                .withOptions()
                .tenantIdentifier((Object) Routing.PRIMARY)
                .openSession()) {
            session.getTransaction().begin();
            session.find(Account.class, ID).balance = 150;
            session.getTransaction().commit();
        }
        catchUp();

        assertThat(readBalance(ID))
                .as("a default session after both standbys replayed the update of a \"primary\" session")
                .isEqualTo(150);
    }

    @Test
    void actorsWrite_isReadByTheActorsNextUnitOfWork_whileBothStandbysLackIt() throws SQLException {
        onPrimary(cluster, "insert into account (id, name, balance, version) values (" + ID + ", 'alice', 100, 0)");
        catchUp();
        assertThat(readBalance(ID)).isEqualTo(100);
        pauseBothStandbys();

        // A mutation request (the servlet filter runs it with the actor, on the primary).
        try (RoutingScope mutation = RoutingScope.builder()
                        .actor("alice")
                        .strategy(Strategy.PRIMARY)
                        .open();
                EntityManager em = cached.createEntityManager()) {
            em.getTransaction().begin();
            em.find(Account.class, ID).balance = 150;
            em.getTransaction().commit();
        }

        assertThat(readBalanceAs("alice", ID))
                .as("alice's next request, whichever path serves it")
                .isEqualTo(150);
        cached.getCache().evict(Account.class, ID);
        assertThat(readBalanceAs("alice", ID))
                .as("alice's next request, once the entry is gone: the database, at alice's position")
                .isEqualTo(150);
    }

    @Test
    void readFromALaggingReplica_doesNotPutItsOldStateIntoTheCache() throws SQLException {
        onPrimary(cluster, "insert into note (id, text) values (" + ID + ", 'v1')");
        catchUp();
        pauseBothStandbys();
        Routing.run(Strategy.PRIMARY, () -> updateNote(ID, "v2"));
        cached.getCache().evict(Note.class, ID); // as if the entry had expired

        assertThat(readNote(ID))
                .as("a default session reads the lagging replica")
                .isEqualTo("v1");

        assertThat(Routing.with(Strategy.PRIMARY, () -> readNote(ID)))
                .as("a read in a PRIMARY scope")
                .isEqualTo("v2");
        cached.getCache().evict(Note.class, ID);
        assertThat(readNote(ID)).isEqualTo("v1");
        assertThat(readNoteOnThePrimary(ID))
                .as("a read of a session with the PRIMARY strategy")
                .isEqualTo("v2");
        cluster.resumeAll();
        catchUp();
        assertThat(readNote(ID))
                .as("a default session once the standbys caught up")
                .isEqualTo("v2");
    }

    @Test
    void entityCachedByAPrimaryRead_isHitByDefaultSessions_andEvictedByItsId() throws SQLException {
        onPrimary(cluster, "insert into note (id, text) values (" + ID + ", 'v1')");
        catchUp();
        assertThat(Routing.with(Strategy.PRIMARY, () -> readNote(ID))).isEqualTo("v1");
        assertThat(cached.getCache().contains(Note.class, ID))
                .as("what the primary read put is found by Cache.contains")
                .isTrue();

        final long hits = statistics().getSecondLevelCacheHitCount();
        final long statements = statistics().getPrepareStatementCount();
        assertThat(readNote(ID)).isEqualTo("v1");
        assertThat(statistics().getSecondLevelCacheHitCount() - hits)
                .as("a default session hits the entry a primary read put")
                .isEqualTo(1);
        assertThat(statistics().getPrepareStatementCount())
                .as("and runs no statement")
                .isEqualTo(statements);

        cached.getCache().evict(Note.class, ID);
        assertThat(cached.getCache().contains(Note.class, ID)).isFalse();
        final long misses = statistics().getSecondLevelCacheMissCount();
        assertThat(readNote(ID)).isEqualTo("v1");
        assertThat(statistics().getSecondLevelCacheMissCount() - misses)
                .as("Cache.evict(Note.class, id) evicted what the sessions used")
                .isEqualTo(1);
    }

    // ---- collections ----------------------------------------------------------------------------

    @Test
    void collectionChangedInAPrimaryScope_isReadByDefaultSessions_onceTheStandbysReplayedIt() throws SQLException {
        insertAuthor(ID, "ann@example.com", "a", "b");
        catchUp();
        assertThat(readTags(ID))
                .as("a default session reads the collection from a replica")
                .containsExactly("a", "b");

        Routing.run(
                Strategy.PRIMARY,
                () -> inTransaction(em -> em.find(Author.class, ID).tags.add("c")));
        catchUp();

        assertThat(readTags(ID))
                .as("a default session after both standbys replayed the change")
                .containsExactly("a", "b", "c");
    }

    @Test
    void collectionReadFromALaggingReplica_isNotPutIntoTheCache() throws SQLException {
        insertAuthor(ID, "ann@example.com", "a", "b");
        catchUp();
        pauseBothStandbys();
        Routing.run(
                Strategy.PRIMARY,
                () -> inTransaction(em -> em.find(Author.class, ID).tags.add("c")));
        // As if the entries had expired. The owner too: a unit of work served its owner by the cache
        // reads the collection no older than the cache (the primary, while both standbys lag).
        cache().evictCollectionData(TAGS, ID);
        cache().evictEntityData(Author.class, ID);

        assertThat(readTags(ID))
                .as("a default session reads the lagging replica")
                .containsExactly("a", "b");

        assertThat(Routing.with(Strategy.PRIMARY, () -> readTags(ID)))
                .as("a read in a PRIMARY scope")
                .containsExactly("a", "b", "c");
        cache().evictCollectionData(TAGS, ID);
        cache().evictEntityData(Author.class, ID);
        assertThat(readTags(ID)).containsExactly("a", "b");
        final Set<String> onPrimary = onThePrimary(em -> new TreeSet<>(em.find(Author.class, ID).tags));
        assertThat(onPrimary)
                .as("a read of a session with the PRIMARY strategy")
                .containsExactly("a", "b", "c");
        cluster.resumeAll();
        catchUp();
        assertThat(readTags(ID))
                .as("a default session once the standbys caught up")
                .containsExactly("a", "b", "c");
    }

    // ---- natural ids ----------------------------------------------------------------------------

    @Test
    void naturalIdMovedInAPrimaryScope_isResolvedByDefaultSessions_onceTheStandbysReplayedIt() throws SQLException {
        insertAuthor(ID, "ann@example.com", "a");
        catchUp();
        assertThat(authorIdByEmail("ann@example.com")).isEqualTo(ID);

        final long newId = Routing.with(Strategy.PRIMARY, () -> replaceAuthor(ID, "ann@example.com"));
        catchUp();

        assertThat(authorIdByEmail("ann@example.com"))
                .as("a default session after both standbys replayed the change")
                .isEqualTo(newId);
    }

    @Test
    void naturalIdResolvedOnALaggingReplica_isNotPutIntoTheCache() throws SQLException {
        insertAuthor(ID, "ann@example.com", "a");
        catchUp();
        pauseBothStandbys();
        final long newId = Routing.with(Strategy.PRIMARY, () -> replaceAuthor(ID, "ann@example.com"));
        cache().evictNaturalIdData(Author.class); // as if the entry had expired

        assertThat(authorIdByEmail("ann@example.com"))
                .as("a default session resolves the natural id on the lagging replica")
                .isEqualTo(ID);

        assertThat(Routing.with(Strategy.PRIMARY, () -> authorIdByEmail("ann@example.com")))
                .as("a read in a PRIMARY scope")
                .isEqualTo(newId);
        cache().evictNaturalIdData(Author.class);
        assertThat(authorIdByEmail("ann@example.com")).isEqualTo(ID);
        final long onPrimary = onThePrimary(em -> byEmail(em, "ann@example.com").id);
        assertThat(onPrimary)
                .as("a read of a session with the PRIMARY strategy")
                .isEqualTo(newId);
        cluster.resumeAll();
        catchUp();
        assertThat(authorIdByEmail("ann@example.com"))
                .as("a default session once the standbys caught up")
                .isEqualTo(newId);
    }

    // ---- the query cache ------------------------------------------------------------------------

    @Test
    void queryRunOnALaggingReplica_isNotServedFromTheCacheOnceTheReplicaCaughtUp() throws SQLException {
        onPrimary(cluster, "insert into note (id, text) values (" + ID + ", 'n1')");
        catchUp();
        pauseBothStandbys();
        Routing.run(Strategy.PRIMARY, () -> inTransaction(em -> em.persist(new Note("n2"))));

        assertThat(noteTexts())
                .as("a default session queries the lagging replica")
                .containsExactly("n1");

        cluster.resumeAll();
        catchUp();
        assertThat(noteTexts())
                .as("a default session once the standbys caught up")
                .containsExactly("n1", "n2");
    }

    @Test
    void queryRunOnThePrimary_isHitByDefaultSessions_andInvalidatedByWrites() throws SQLException {
        onPrimary(cluster, "insert into note (id, text) values (" + ID + ", 'n1')");
        catchUp();
        final List<String> onPrimary = onThePrimary(SecondLevelCacheIT::noteTexts);
        assertThat(onPrimary)
                .as("a \"replica\" session that runs the query on the primary")
                .containsExactly("n1");

        final long hits = statistics().getQueryCacheHitCount();
        assertThat(noteTexts()).containsExactly("n1");
        assertThat(statistics().getQueryCacheHitCount() - hits)
                .as("a default session hits the result the primary put")
                .isEqualTo(1);

        Routing.run(Strategy.PRIMARY, () -> inTransaction(em -> em.persist(new Note("n2"))));
        catchUp();
        assertThat(noteTexts()).as("the write invalidated the result").containsExactly("n1", "n2");
    }

    // ---- helpers --------------------------------------------------------------------------------

    private static Statistics statistics() {
        return cached.unwrap(SessionFactory.class).getStatistics();
    }

    private static Cache cache() {
        return cached.getCache().unwrap(Cache.class);
    }

    private static void catchUp() {
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        runtime(cached).checkReplicasNow();
    }

    private static void pauseBothStandbys() {
        cluster.standbys().forEach(cluster::pauseReplay);
    }

    private static void insertAuthor(long id, String email, String... tags) throws SQLException {
        final StringBuilder sql =
                new StringBuilder("insert into author (id, email, name) values (" + id + ", '" + email + "', 'v1');");
        for (String tag : tags) {
            sql.append(" insert into author_tag (author_id, tag) values (")
                    .append(id)
                    .append(", '")
                    .append(tag)
                    .append("');");
        }
        onPrimary(cluster, sql.toString());
    }

    private static void inTransaction(Consumer<EntityManager> work) {
        try (EntityManager em = cached.createEntityManager()) {
            em.getTransaction().begin();
            work.accept(em);
            em.getTransaction().commit();
        }
    }

    private static void updateNote(long id, String text) {
        inTransaction(em -> em.find(Note.class, id).text = text);
    }

    /** Deletes the author and creates another with the same natural id, in two transactions; returns the new id. */
    private static long replaceAuthor(long id, String email) {
        inTransaction(em -> em.remove(em.find(Author.class, id)));
        final Author author = new Author(email, "v2", Set.of("x"));
        inTransaction(em -> em.persist(author));
        return author.id;
    }

    private static <T> T inSession(Function<EntityManager, T> read) {
        try (EntityManager em = cached.createEntityManager()) {
            return read.apply(em);
        }
    }

    /** A read in a session whose EntityManager property says PRIMARY: its connection identifier stays "replica". */
    private static <T> T onThePrimary(Function<EntityManager, T> read) {
        try (EntityManager em = cached.createEntityManager()) {
            em.setProperty(RoutingSettings.STRATEGY, Strategy.PRIMARY.name());
            return read.apply(em);
        }
    }

    private static String readNote(long id) {
        return inSession(em -> em.find(Note.class, id).text);
    }

    private static String readNoteOnThePrimary(long id) {
        return onThePrimary(em -> em.find(Note.class, id).text);
    }

    private static int readBalance(long id) {
        return inSession(em -> em.find(Account.class, id).balance);
    }

    private static int readBalanceAs(String actor, long id) {
        try (RoutingScope request = RoutingScope.builder().actor(actor).open()) {
            return readBalance(id);
        }
    }

    private static Set<String> readTags(long id) {
        return inSession(em -> new TreeSet<>(em.find(Author.class, id).tags));
    }

    private static long authorIdByEmail(String email) {
        return inSession(em -> byEmail(em, email).id);
    }

    /** A load by natural id; its replacement in Hibernate 7.3 ({@code find} with {@code KeyType.NATURAL}) is not in 7.2. */
    @SuppressWarnings("deprecation")
    private static Author byEmail(EntityManager em, String email) {
        return em.unwrap(Session.class).bySimpleNaturalId(Author.class).load(email);
    }

    /** The cacheable query in a default session. */
    private static List<String> noteTexts() {
        return inSession(SecondLevelCacheIT::noteTexts);
    }

    private static List<String> noteTexts(EntityManager em) {
        return em.createQuery(NOTE_TEXTS, String.class)
                .setHint(HibernateHints.HINT_CACHEABLE, true)
                .getResultList();
    }
}
