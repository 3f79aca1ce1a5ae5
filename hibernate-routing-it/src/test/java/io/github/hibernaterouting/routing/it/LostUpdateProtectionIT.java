package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.StaleReplicaReadException;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.OptimisticLockException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * No lost update from a stale replica read: a versioned entity fails its version check on the
 * primary; an unversioned one is re-verified against the primary and refused with a
 * {@code StaleReplicaReadException} naming the entity and the fixes (also for a delete), and
 * written when the primary has not changed, under every strategy that reads replicas.
 */
@ExtendWith(RoutingLeakCheck.class)
class LostUpdateProtectionIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

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
