package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.StaleReplicaReadException;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.OptimisticLockException;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No lost update from a stale replica read: a versioned entity fails its version check on the
 * primary; an unversioned one is re-verified against the primary and refused with a
 * {@code StaleReplicaReadException} naming the entity and the fixes (also for a delete), and
 * written when the primary has not changed.
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
