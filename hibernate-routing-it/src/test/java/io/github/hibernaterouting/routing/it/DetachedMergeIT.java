package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.awaitCaughtUpAsSeenBy;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.stringOnPrimary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingScope;
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
import java.util.Map;
import java.util.function.Function;
import org.hibernate.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A detached merge: one unit of work reads an entity from a replica, a later one merges the
 * detached instance and commits, as Spring Data's {@code findById} then {@code save} does in a
 * scheduled job or a listener. The merge loads the current row (from the primary, or from a standby
 * that has caught up) and copies the detached state over it, so a stale first read would be
 * written over the newer row. The library remembers the state an instance was read with from a
 * replica, and checks it against the primary before the merged entity is written. Each stale case
 * pauses replay on both standbys and changes the row on the primary behind them.
 */
@ExtendWith(RoutingLeakCheck.class)
class DetachedMergeIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /** A note read as {@code "a"} from a paused standby, detached, while the primary has {@code "b"}. */
    private Note staleDetachedNote(boolean readOnlySession) throws SQLException {
        final long id = createNote("a");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update note set text = 'b' where id = " + id);
        try (EntityManager em = emf.createEntityManager()) {
            if (readOnlySession) {
                // What Spring Data's findById does: a readOnly transaction makes the session read-only,
                // and Hibernate keeps no loaded state for read-only entities.
                em.unwrap(Session.class).setDefaultReadOnly(true);
            }
            final Note note = em.find(Note.class, id);
            assertThat(note.text).as("read from a paused standby").isEqualTo("a");
            return note;
        }
    }

    private static String textOnPrimary(long id) throws SQLException {
        return stringOnPrimary(cluster, "select text from note where id = " + id);
    }

    private static void merge(Object detached) {
        merge(emf, detached);
    }

    private static void merge(EntityManagerFactory factory, Object detached) {
        try (EntityManager em = factory.createEntityManager()) {
            em.getTransaction().begin();
            try {
                em.merge(detached);
                em.getTransaction().commit();
            } finally {
                if (em.getTransaction().isActive()) {
                    em.getTransaction().rollback();
                }
            }
        }
    }

    @Test
    void staleRead_mergedInALaterUnit_afterTheStandbysCaughtUp_isRefused() throws SQLException {
        final Note stale = staleDetachedNote(false);
        cluster.resumeAll();
        awaitCaughtUpAsSeenBy(cluster, emf);
        stale.text = "c";
        assertThatThrownBy(() -> merge(stale))
                .isInstanceOf(OptimisticLockException.class)
                .hasRootCauseInstanceOf(StaleReplicaReadException.class)
                .rootCause()
                .hasMessageContaining(Note.class.getName())
                .hasMessageContaining("text")
                .hasMessageContaining("@Version");
        assertThat(textOnPrimary(stale.id)).isEqualTo("b");
    }

    @Test
    void staleRead_mergedInALaterUnitOnThePrimary_isRefused() throws SQLException {
        final Note stale = staleDetachedNote(false);
        stale.text = "c";
        try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
            assertThatThrownBy(() -> merge(stale)).hasRootCauseInstanceOf(StaleReplicaReadException.class);
        }
        assertThat(textOnPrimary(stale.id)).isEqualTo("b");
    }

    @Test
    void staleReadInAReadOnlySession_mergedLater_isRefused() throws SQLException {
        final Note stale = staleDetachedNote(true);
        stale.text = "c";
        try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
            assertThatThrownBy(() -> merge(stale)).hasRootCauseInstanceOf(StaleReplicaReadException.class);
        }
        assertThat(textOnPrimary(stale.id)).isEqualTo("b");
    }

    /**
     * A stale instance whose change makes it equal to the primary's newer row: the merge finds nothing
     * dirty and writes nothing, so without a check at the merge the change (an increment from the stale
     * value, say) would be lost without a word. Found by the checker matrix's detached increments.
     */
    @Test
    void staleRead_whoseChangeEqualsTheNewerRow_isRefusedAtTheMerge() throws SQLException {
        final Note stale = staleDetachedNote(false);
        stale.text = "b";
        try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
            assertThatThrownBy(() -> merge(stale))
                    .isInstanceOf(OptimisticLockException.class)
                    .hasRootCauseInstanceOf(StaleReplicaReadException.class);
        }
    }

    @Test
    void currentRead_mergedLater_isWritten_andSoIsTheNextMerge() throws SQLException {
        final long id = createNote("a");
        awaitCaughtUpAsSeenBy(cluster, emf);
        final Note detached;
        try (EntityManager em = emf.createEntityManager()) {
            detached = em.find(Note.class, id);
        }
        detached.text = "c";
        merge(detached);
        assertThat(textOnPrimary(id)).isEqualTo("c");
        detached.text = "d";
        merge(detached);
        assertThat(textOnPrimary(id))
                .as("its first merge wrote its state: the replica read is no longer its base")
                .isEqualTo("d");
    }

    @Test
    void staleRead_thenUpdatedInItsOwnUnit_thenMerged_isNotRefusedForTheOldRead() throws SQLException {
        final long id = createNote("a");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        final Note detached;
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            detached = em.find(Note.class, id);
            detached.text = "b";
            em.getTransaction().commit();
        }
        detached.text = "c";
        merge(detached);
        assertThat(textOnPrimary(id)).isEqualTo("c");
    }

    @Test
    void entityWithAManyToOneAndAnEmbeddable_isWrittenWhenCurrent_andRefusedWhenEitherChanged() throws SQLException {
        onPrimary(cluster, """
                drop table if exists task;
                create table task (id bigint primary key, title text, note_id bigint references note, week int,
                    owner text);
                """);
        try (var tasks = RoutingTestSupport.emf(
                "routing-it-tasks", cluster, RoutingItSupport.withoutCache(Map.of()), Note.class, Task.class)) {
            final long first = createNote("first");
            final long second = createNote("second");
            onPrimary(
                    cluster,
                    "insert into task values (1, 'x', " + first + ", 5, 'ann'), (2, 'x', " + first
                            + ", 5, 'ann'), (3, 'x', " + first + ", 5, 'ann')");
            awaitCaughtUpAsSeenBy(cluster, tasks);
            final Function<Long, Task> read = id -> {
                try (EntityManager em = tasks.createEntityManager()) {
                    return em.find(Task.class, id);
                }
            };
            try (EntityManager em = tasks.createEntityManager()) {
                em.getTransaction().begin();
                final Task task = em.find(Task.class, 1L);
                task.title = "w";
                em.getTransaction().commit();
            }
            assertThat(stringOnPrimary(cluster, "select title from task where id = 1"))
                    .as("read on a replica and written in one unit: the embeddable is compared as it is")
                    .isEqualTo("w");
            final Task current = read.apply(1L);
            current.title = "y";
            merge(tasks, current);
            assertThat(stringOnPrimary(cluster, "select title from task where id = 1"))
                    .isEqualTo("y");

            pauseAllStandbys();
            onPrimary(
                    cluster,
                    "update task set note_id = " + second + " where id = 2;"
                            + " update task set owner = 'bob' where id = 3");
            final Task staleTarget = read.apply(2L);
            final Task staleOwner = read.apply(3L);
            staleTarget.title = "y";
            staleOwner.title = "y";
            assertThatThrownBy(() -> merge(tasks, staleTarget))
                    .hasRootCauseInstanceOf(StaleReplicaReadException.class)
                    .rootCause()
                    .hasMessageContaining("(note)");
            assertThatThrownBy(() -> merge(tasks, staleOwner))
                    .hasRootCauseInstanceOf(StaleReplicaReadException.class)
                    .rootCause()
                    .hasMessageContaining("(due)");
            assertThat(stringOnPrimary(cluster, "select title from task where id = 2"))
                    .isEqualTo("x");
        } finally {
            onPrimary(cluster, "drop table task");
        }
    }

    @Test
    void versionedEntity_staleRead_mergedLater_failsItsVersionCheck() throws SQLException {
        final long id = createAccount("versioned", 100);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update account set balance = 500, version = version + 1 where id = " + id);
        final Account stale;
        try (EntityManager em = emf.createEntityManager()) {
            stale = em.find(Account.class, id);
            assertThat(stale.balance).isEqualTo(100);
        }
        stale.balance = 150;
        try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
            assertThatThrownBy(() -> merge(stale)).isInstanceOf(OptimisticLockException.class);
        }
    }
}
