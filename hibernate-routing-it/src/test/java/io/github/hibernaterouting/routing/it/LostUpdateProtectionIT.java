package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.StaleReplicaReadException;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.OptimisticLockException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * No lost update from a stale replica read: a versioned entity fails its version check on the
 * primary; an unversioned one is re-verified against the primary and refused with a
 * {@code StaleReplicaReadException} naming the entity and the fixes (also for a delete), and
 * written when the primary has not changed, under every strategy that reads replicas. The same
 * for the collections of an unversioned owner ({@link Shelf}): one read from a replica is checked
 * against the primary before it is written, so that rows written on the primary since are never
 * lost to a delete-and-insert or to row updates made from the stale state.
 */
@ExtendWith(RoutingLeakCheck.class)
class LostUpdateProtectionIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /** A persistence unit with {@link Shelf} and {@link Book}, on the same cluster. */
    static EntityManagerFactory shelves;

    @BeforeAll
    static void startShelves() throws SQLException {
        onPrimary(cluster, """
                drop table if exists shelf, book, shelf_tag, shelf_line, shelf_label, shelf_attribute, shelf_book,
                    shelf_favourite cascade;
                create table book (id bigint primary key, title text);
                create table shelf (id bigint primary key, name text);
                create table shelf_tag (shelf_id bigint not null references shelf, tag text not null,
                    primary key (shelf_id, tag));
                create table shelf_line (shelf_id bigint not null references shelf, position int not null, line text,
                    primary key (shelf_id, position));
                create table shelf_label (shelf_id bigint not null references shelf, label text);
                create table shelf_attribute (shelf_id bigint not null references shelf, name text not null,
                    value text, primary key (shelf_id, name));
                create table shelf_book (shelf_id bigint not null references shelf,
                    book_id bigint not null unique references book);
                create table shelf_favourite (shelf_id bigint not null references shelf,
                    book_id bigint not null references book, primary key (shelf_id, book_id));
                """);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        shelves = RoutingTestSupport.emf(
                "routing-it-shelves", cluster, RoutingItSupport.withoutCache(Map.of()), Shelf.class, Book.class);
    }

    @AfterAll
    static void closeShelves() {
        if (shelves != null) {
            shelves.close();
        }
    }

    /** Shelves 1 and 2 with no elements, and books 1 to 3, on every node. */
    @BeforeEach
    void emptyShelves() throws SQLException {
        onPrimary(cluster, """
                delete from shelf_tag; delete from shelf_line; delete from shelf_label; delete from shelf_attribute;
                delete from shelf_book; delete from shelf_favourite; delete from shelf; delete from book;
                insert into book (id, title) values (1, 'one'), (2, 'two'), (3, 'three');
                insert into shelf (id, name) values (1, 'first'), (2, 'second');
                """);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    @Test
    void staleReplicaRead_thenUpdate_ofVersionedEntity_failsWithOptimisticLock() throws SQLException {
        final long id = createAccount("versioned", 100);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update account set balance = 500, version = version + 1 where id = " + id);
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Account stale = em.find(Account.class, id);
            assertThat(stale.balance).as("read from a paused replica").isEqualTo(100);
            stale.balance = 150;
            assertThatThrownBy(() -> em.getTransaction().commit()).hasCauseInstanceOf(OptimisticLockException.class);
        }
        assertThat(balanceOnPrimary(id)).isEqualTo(500);
    }

    @Test
    void staleReplicaRead_thenUpdate_ofUnversionedEntity_failsNamingEntityAndFixes() throws SQLException {
        final long id = createNote("a");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update note set text = 'b' where id = " + id);
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Note stale = em.find(Note.class, id);
            assertThat(stale.text).isEqualTo("a");
            stale.text = "c";
            assertThatThrownBy(() -> em.getTransaction().commit())
                    .hasCauseInstanceOf(OptimisticLockException.class)
                    .hasRootCauseInstanceOf(StaleReplicaReadException.class)
                    .rootCause()
                    .hasMessageContaining(Note.class.getName())
                    .hasMessageContaining("@Version")
                    .hasMessageContaining("Strategy.PRIMARY")
                    .hasMessageContaining("text");
        }
        assertThat(textOnPrimary(id)).isEqualTo("b");

        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.remove(em.find(Note.class, id));
            assertThatThrownBy(() -> em.getTransaction().commit())
                    .hasRootCauseInstanceOf(StaleReplicaReadException.class);
        }
        assertThat(textOnPrimary(id)).as("a stale delete is refused too").isEqualTo("b");
    }

    @Test
    void replicaRead_thenUpdate_ofUnversionedEntity_succeedsWhenPrimaryIsUnchanged() throws SQLException {
        final long id = createNote("a");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Note note = em.find(Note.class, id);
            note.text = "c";
            em.getTransaction().commit();
        }
        assertThat(textOnPrimary(id)).isEqualTo("c");
    }

    /** The ways an application asks for {@code STALE_READ}. */
    enum StaleReadLevel {
        SCOPE,
        ENTITY_MANAGER_PROPERTY,
        QUERY_HINT_ON_THE_LOADING_QUERY
    }

    /**
     * Runs {@code work} with an EntityManager whose loads of notes read a replica under
     * {@code STALE_READ} set at {@code level}. For the query hint, the EntityManager has written
     * first: without the hint its reads would go to the primary.
     */
    private static <T> T underStaleRead(StaleReadLevel level, Function<EntityManager, T> work) {
        try (RoutingScope ignored = level == StaleReadLevel.SCOPE ? RoutingScope.open(Strategy.STALE_READ) : null;
                EntityManager em = emf.createEntityManager()) {
            if (level == StaleReadLevel.ENTITY_MANAGER_PROPERTY) {
                em.setProperty(RoutingSettings.STRATEGY, Strategy.STALE_READ);
            }
            if (level == StaleReadLevel.QUERY_HINT_ON_THE_LOADING_QUERY) {
                em.getTransaction().begin();
                em.persist(new Note("written first"));
                em.getTransaction().commit();
            }
            return work.apply(em);
        }
    }

    private static Note load(EntityManager em, StaleReadLevel level, long id) {
        if (level != StaleReadLevel.QUERY_HINT_ON_THE_LOADING_QUERY) {
            return em.find(Note.class, id);
        }
        return em.createQuery("select n from Note n where n.id = :id", Note.class)
                .setParameter("id", id)
                .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.STALE_READ))
                .getSingleResult();
    }

    @ParameterizedTest
    @EnumSource(StaleReadLevel.class)
    void staleReadStrategy_staleReplicaRead_thenUpdateOrDelete_ofUnversionedEntity_isCheckedOnThePrimary(
            StaleReadLevel level) throws SQLException {
        final long id = createNote("a");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update note set text = 'b' where id = " + id);
        final Throwable update = underStaleRead(level, em -> {
            em.getTransaction().begin();
            final Note stale = load(em, level, id);
            assertThat(stale.text).as("read from a paused replica").isEqualTo("a");
            stale.text = "c";
            return catchThrowable(() -> em.getTransaction().commit());
        });
        assertThat(textOnPrimary(id))
                .as("the primary's newer text after a stale update under STALE_READ (%s)", level)
                .isEqualTo("b");
        assertThat(update)
                .as("the update of a stale read under STALE_READ (%s)", level)
                .hasCauseInstanceOf(OptimisticLockException.class)
                .hasRootCauseInstanceOf(StaleReplicaReadException.class)
                .rootCause()
                .hasMessageContaining(Note.class.getName() + " with id " + id)
                .hasMessageContaining("text")
                .hasMessageContaining("@Version")
                .hasMessageContaining("Strategy.PRIMARY");
        final Throwable delete = underStaleRead(level, em -> {
            em.getTransaction().begin();
            em.remove(load(em, level, id));
            return catchThrowable(() -> em.getTransaction().commit());
        });
        assertThat(textOnPrimary(id)).as("a stale delete is refused too").isEqualTo("b");
        assertThat(delete).hasRootCauseInstanceOf(StaleReplicaReadException.class);
    }

    @ParameterizedTest
    @EnumSource(StaleReadLevel.class)
    void staleReadStrategy_replicaRead_thenUpdate_ofUnversionedEntity_succeedsWhenPrimaryIsUnchanged(
            StaleReadLevel level) throws SQLException {
        final long id = createNote("a");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        underStaleRead(level, em -> {
            em.getTransaction().begin();
            final Note note = load(em, level, id);
            note.text = "c";
            em.getTransaction().commit();
            // The check read the primary; the unit of work goes on reading replicas under STALE_READ.
            final Number port = (Number) em.createNativeQuery(
                            "/*+ " + RoutingHints.strategy(Strategy.STALE_READ) + " */ select inet_server_port()")
                    .getSingleResult();
            assertThat(cluster.nodeForPort(port.intValue()).isPrimary())
                    .as("after the check, STALE_READ reads go to a replica again")
                    .isFalse();
            return null;
        });
        assertThat(textOnPrimary(id)).isEqualTo("c");
    }

    /**
     * A change of one collection of shelf 1: its rows before, what the primary changes behind the
     * paused standbys, what the unit of work does with the state it read, and the collection's rows
     * (each as {@link #rows} reads them) after.
     */
    enum Change {
        SET_EMPTIED(
                "tags",
                "insert into shelf_tag (shelf_id, tag) values (1, 'a')",
                "insert into shelf_tag (shelf_id, tag) values (1, 'b')",
                "a,b",
                null) {
            @Override
            void apply(EntityManager em, Shelf shelf) {
                assertThat(shelf.tags).containsExactly("a");
                shelf.tags.remove("a");
            }
        },
        LIST_EMPTIED(
                "lines",
                "insert into shelf_line (shelf_id, position, line) values (1, 0, 'l0')",
                "insert into shelf_line (shelf_id, position, line) values (1, 1, 'l1')",
                "0:l0,1:l1",
                null) {
            @Override
            void apply(EntityManager em, Shelf shelf) {
                assertThat(shelf.lines).containsExactly("l0");
                shelf.lines.clear();
            }
        },
        LIST_ELEMENT_REPLACED(
                "lines",
                "insert into shelf_line (shelf_id, position, line) values (1, 0, 'l0')",
                "update shelf_line set line = 'newer' where shelf_id = 1 and position = 0",
                "0:newer",
                "0:x") {
            @Override
            void apply(EntityManager em, Shelf shelf) {
                assertThat(shelf.lines).containsExactly("l0");
                shelf.lines.set(0, "x");
            }
        },
        ELEMENT_BAG_GROWN(
                "labels",
                "insert into shelf_label (shelf_id, label) values (1, 'a')",
                "insert into shelf_label (shelf_id, label) values (1, 'b')",
                "a,b",
                "a,c") {
            @Override
            void apply(EntityManager em, Shelf shelf) {
                assertThat(shelf.labels).containsExactly("a");
                shelf.labels.add("c");
            }
        },
        MAP_EMPTIED(
                "attributes",
                "insert into shelf_attribute (shelf_id, name, value) values (1, 'colour', 'red')",
                "insert into shelf_attribute (shelf_id, name, value) values (1, 'size', 'big')",
                "colour=red,size=big",
                null) {
            @Override
            void apply(EntityManager em, Shelf shelf) {
                assertThat(shelf.attributes).containsExactly(Map.entry("colour", "red"));
                shelf.attributes.clear();
            }
        },
        MAP_VALUE_REPLACED(
                "attributes",
                "insert into shelf_attribute (shelf_id, name, value) values (1, 'colour', 'red')",
                "update shelf_attribute set value = 'blue' where shelf_id = 1 and name = 'colour'",
                "colour=blue",
                "colour=green") {
            @Override
            void apply(EntityManager em, Shelf shelf) {
                assertThat(shelf.attributes).containsExactly(Map.entry("colour", "red"));
                shelf.attributes.put("colour", "green");
            }
        },
        ENTITY_BAG_GROWN(
                "books",
                "insert into shelf_book (shelf_id, book_id) values (1, 1)",
                "insert into shelf_book (shelf_id, book_id) values (1, 2)",
                "1,2",
                "1,3") {
            @Override
            void apply(EntityManager em, Shelf shelf) {
                assertThat(shelf.books).extracting(book -> book.id).containsExactly(1L);
                shelf.books.add(em.find(Book.class, 3L));
            }
        },
        ENTITY_SET_EMPTIED(
                "favourites",
                "insert into shelf_favourite (shelf_id, book_id) values (1, 1)",
                "insert into shelf_favourite (shelf_id, book_id) values (1, 2)",
                "1,2",
                null) {
            @Override
            void apply(EntityManager em, Shelf shelf) {
                assertThat(shelf.favourites).extracting(book -> book.id).containsExactly(1L);
                shelf.favourites.clear();
            }
        };

        final String attribute;
        final String before;
        final String onThePrimary;
        final String afterRefusal;
        final String afterWrite;

        Change(String attribute, String before, String onThePrimary, String afterRefusal, String afterWrite) {
            this.attribute = attribute;
            this.before = before;
            this.onThePrimary = onThePrimary;
            this.afterRefusal = afterRefusal;
            this.afterWrite = afterWrite;
        }

        abstract void apply(EntityManager em, Shelf shelf);

        String role() {
            return Shelf.class.getName() + "." + attribute;
        }
    }

    /** The rows of {@code attribute} of shelf {@code shelf} on the primary, sorted and joined with commas; null for none. */
    private static String rows(String attribute, long shelf) throws SQLException {
        final String[] tableAndRow = switch (attribute) {
            case "tags" -> new String[] {"shelf_tag", "tag"};
            case "lines" -> new String[] {"shelf_line", "position || ':' || line"};
            case "labels" -> new String[] {"shelf_label", "label"};
            case "attributes" -> new String[] {"shelf_attribute", "name || '=' || value"};
            case "books" -> new String[] {"shelf_book", "book_id::text"};
            case "favourites" -> new String[] {"shelf_favourite", "book_id::text"};
            default -> throw new IllegalArgumentException(attribute);
        };
        try (var c = cluster.connect(cluster.primary());
                var s = c.createStatement();
                var rs = s.executeQuery("select string_agg(" + tableAndRow[1] + ", ',' order by " + tableAndRow[1]
                        + ") from " + tableAndRow[0] + " where shelf_id = " + shelf)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void assertRefusedNamingTheCollection(Throwable thrown, String role, long shelf) {
        assertThat(thrown)
                .as("the flush of %s read from a stale replica", role)
                .hasCauseInstanceOf(OptimisticLockException.class)
                .hasRootCauseInstanceOf(StaleReplicaReadException.class)
                .rootCause()
                .hasMessageContaining("Collection " + role + " ")
                .hasMessageContaining(Shelf.class.getName() + " with id " + shelf)
                .hasMessageContaining("@Version")
                .hasMessageContaining("Strategy.PRIMARY");
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void collectionOfUnversionedOwner_readFromAStaleReplica_neverOverwritesWhatThePrimaryHasSince(Change change)
            throws SQLException {
        onPrimary(cluster, change.before);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, change.onThePrimary);
        final Throwable thrown;
        try (EntityManager em = shelves.createEntityManager()) {
            em.getTransaction().begin();
            change.apply(em, em.find(Shelf.class, 1L));
            thrown = catchThrowable(() -> em.getTransaction().commit());
        }
        assertThat(rows(change.attribute, 1))
                .as("%s of shelf 1 on the primary after a change made from a stale read (%s)", change.attribute, change)
                .isEqualTo(change.afterRefusal);
        assertRefusedNamingTheCollection(thrown, change.role(), 1);
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void collectionOfUnversionedOwner_readFromAReplica_isWrittenWhenThePrimaryIsUnchanged(Change change)
            throws SQLException {
        onPrimary(cluster, change.before);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        try (EntityManager em = shelves.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("the unit of work reads a replica")
                    .isFalse();
            change.apply(em, em.find(Shelf.class, 1L));
            em.getTransaction().commit();
        }
        assertThat(rows(change.attribute, 1))
                .as("%s of shelf 1 on the primary", change.attribute)
                .isEqualTo(change.afterWrite);
    }

    @Test
    void collectionJoinFetchedWithItsOwner_fromAStaleReplica_isCheckedToo() throws SQLException {
        final Change change = Change.SET_EMPTIED;
        onPrimary(cluster, change.before);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, change.onThePrimary);
        final Throwable thrown;
        try (EntityManager em = shelves.createEntityManager()) {
            em.getTransaction().begin();
            final Shelf shelf = em.createQuery(
                            "select s from Shelf s left join fetch s.tags where s.id = 1", Shelf.class)
                    .getSingleResult();
            change.apply(em, shelf);
            thrown = catchThrowable(() -> em.getTransaction().commit());
        }
        assertThat(rows("tags", 1)).isEqualTo(change.afterRefusal);
        assertRefusedNamingTheCollection(thrown, change.role(), 1);
    }

    @Test
    void collectionInitializedInABatchWithAnotherOwners_fromAStaleReplica_isCheckedToo() throws SQLException {
        onPrimary(cluster, "insert into shelf_tag (shelf_id, tag) values (1, 'a'), (2, 'a')");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "insert into shelf_tag (shelf_id, tag) values (2, 'b')");
        final Throwable thrown;
        try (EntityManager em = shelves.createEntityManager()) {
            em.getTransaction().begin();
            final List<Shelf> both = em.createQuery("select s from Shelf s order by s.id", Shelf.class)
                    .getResultList();
            // Initializes the tags of both shelves with one statement (@BatchSize).
            assertThat(both.get(0).tags).containsExactly("a");
            final Shelf second = both.get(1);
            assertThat(second.tags).containsExactly("a");
            second.tags.remove("a");
            thrown = catchThrowable(() -> em.getTransaction().commit());
        }
        assertThat(rows("tags", 2)).isEqualTo("a,b");
        assertRefusedNamingTheCollection(thrown, Change.SET_EMPTIED.role(), 2);
    }

    @Test
    void bagWithRepeatedElements_readFromAReplica_cannotBeCompared_soItsChangeIsRefused() throws SQLException {
        onPrimary(cluster, "insert into shelf_label (shelf_id, label) values (1, 'a'), (1, 'a')");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "insert into shelf_label (shelf_id, label) values (1, 'b')");
        final Throwable thrown;
        try (EntityManager em = shelves.createEntityManager()) {
            em.getTransaction().begin();
            final Shelf shelf = em.find(Shelf.class, 1L);
            assertThat(shelf.labels).containsExactly("a", "a");
            shelf.labels.add("c");
            thrown = catchThrowable(() -> em.getTransaction().commit());
        }
        assertThat(rows("labels", 1)).isEqualTo("a,a,b");
        assertRefusedNamingTheCollection(thrown, Change.ELEMENT_BAG_GROWN.role(), 1);
        assertThat(thrown)
                .rootCause()
                .hasMessageContaining("cannot be compared with the primary (a bag with repeated elements)");
    }

    @Test
    void collectionCheck_underStaleRead_readsThePrimary() throws SQLException {
        final Change change = Change.ELEMENT_BAG_GROWN;
        onPrimary(cluster, change.before);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, change.onThePrimary);
        final Throwable thrown;
        try (RoutingScope ignored = RoutingScope.open(Strategy.STALE_READ);
                EntityManager em = shelves.createEntityManager()) {
            em.getTransaction().begin();
            change.apply(em, em.find(Shelf.class, 1L));
            thrown = catchThrowable(() -> em.getTransaction().commit());
        }
        assertThat(rows(change.attribute, 1)).isEqualTo(change.afterRefusal);
        assertRefusedNamingTheCollection(thrown, change.role(), 1);
    }

    private static int balanceOnPrimary(long id) throws SQLException {
        try (var c = cluster.connect(cluster.primary());
                var s = c.createStatement();
                var rs = s.executeQuery("select balance from account where id = " + id)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static String textOnPrimary(long id) throws SQLException {
        try (var c = cluster.connect(cluster.primary());
                var s = c.createStatement();
                var rs = s.executeQuery("select text from note where id = " + id)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
