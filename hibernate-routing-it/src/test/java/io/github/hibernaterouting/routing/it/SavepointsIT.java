package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.hibernate.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * JDBC savepoints, as Spring's {@code NESTED} propagation and JDBC code set them: a savepoint writes
 * nothing, so it neither moves the unit of work to the primary, nor captures a commit position, nor
 * is refused under {@code REPLICA}; and a rollback to it undoes exactly the writes made after it,
 * also when it was set before the transaction reached the primary.
 */
@ExtendWith(RoutingLeakCheck.class)
class SavepointsIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    private static List<String> textsOnPrimary() throws SQLException {
        try (var c = cluster.connect(cluster.primary());
                var s = c.createStatement();
                var rs = s.executeQuery("select text from note order by id")) {
            final List<String> texts = new ArrayList<>();
            while (rs.next()) {
                texts.add(rs.getString(1));
            }
            return texts;
        }
    }

    private static Savepoint savepoint(EntityManager em) {
        final AtomicReference<Savepoint> set = new AtomicReference<>();
        em.unwrap(Session.class).doWork(connection -> set.set(connection.setSavepoint()));
        return set.get();
    }

    private static void rollbackTo(EntityManager em, Savepoint savepoint) {
        em.unwrap(Session.class).doWork(connection -> connection.rollback(savepoint));
    }

    private static void release(EntityManager em, Savepoint savepoint) {
        em.unwrap(Session.class).doWork(connection -> connection.releaseSavepoint(savepoint));
    }

    @Test
    void aSavepointInAReadWriteTransaction_keepsItsReadsOnTheReplicas_andCapturesNoCommitPosition() {
        try (RoutingScope scope = RoutingScope.builder().actor("savepoints").open();
                EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(servedBy(cluster, em).isPrimary()).isFalse();
            final Savepoint savepoint = savepoint(em);
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("a savepoint is no write")
                    .isFalse();
            release(em, savepoint);
            em.getTransaction().commit();
            assertThat(scope.hasWritten()).isFalse();
            assertThat(scope.lastCommit()).as("nothing committed, no position").isNull();
        }
    }

    @Test
    void aSavepointUnderReplica_isNotRefused() {
        try (RoutingScope ignored = RoutingScope.open(Strategy.REPLICA);
                EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Savepoint savepoint = savepoint(em);
            assertThat(servedBy(cluster, em).isPrimary()).isFalse();
            rollbackTo(em, savepoint);
            em.getTransaction().commit();
        }
    }

    @Test
    void aRollbackToASavepointSetBeforeTheFirstWrite_undoesWhatWasWrittenAfterIt() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.find(Note.class, 1L);
            final Savepoint beforeAnyWrite = savepoint(em);
            em.persist(new Note("undone"));
            em.flush();
            rollbackTo(em, beforeAnyWrite);
            em.clear();
            em.persist(new Note("kept"));
            em.flush();
            final Savepoint afterKept = savepoint(em);
            em.persist(new Note("undone too"));
            em.flush();
            rollbackTo(em, afterKept);
            em.clear();
            em.getTransaction().commit();
        }
        assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
        assertThat(textsOnPrimary()).containsExactly("kept");
    }

    @Test
    void aSavepointOfAnEndedTransaction_isRefusedNamingWhy_andAutoCommitHasNone() {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Savepoint savepoint = savepoint(em);
            em.getTransaction().commit();
            em.getTransaction().begin();
            assertThatThrownBy(() -> rollbackTo(em, savepoint))
                    .hasRootCauseMessage(
                            "Not a savepoint of this connection's current transaction: it was released, rolled past,"
                                    + " or its transaction ended");
            em.getTransaction().rollback();
            assertThatThrownBy(() -> savepoint(em)).hasMessageContaining("auto-commit");
        }
    }
}
