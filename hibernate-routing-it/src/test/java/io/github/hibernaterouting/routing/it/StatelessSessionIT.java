package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.stringOnPrimary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.StaleReplicaReadException;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.data.exceptions.OptimisticLockingFailureException;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.Map;
import java.util.function.Consumer;
import org.hibernate.SessionFactory;
import org.hibernate.StatelessSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code StatelessSession} and the Jakarta Data repositories Hibernate runs on it ({@link Notes}):
 * reads route as a session's do, writes escalate the unit, and no stale replica read becomes a
 * lost update. A stateless session keeps no loaded state and Hibernate fires no load event for it,
 * so the check a stateful session gets (compare what was read with the primary) cannot run: a
 * read-write transaction of a stateless session reads on the primary, and an unversioned entity
 * whose table the session read on a replica is refused before it is updated, upserted or deleted.
 * The same holds for an entity one stateless session read and another one writes, in one routing
 * scope (a request that injects a request-scoped and a transaction-scoped stateless session). Every
 * stale case pauses replay on both standbys and changes the row on the primary behind them.
 */
@ExtendWith(RoutingLeakCheck.class)
class StatelessSessionIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    private static StatelessSession open(EntityManagerFactory factory) {
        return factory.unwrap(SessionFactory.class).openStatelessSession();
    }

    private static Node node(StatelessSession session) {
        final Number port = session.createNativeQuery("select inet_server_port()", Integer.class)
                .getSingleResult();
        return cluster.nodeForPort(port.intValue());
    }

    /** A note whose text is {@code "a"} on the paused standbys and {@code "b"} on the primary. */
    private long staleNote() throws SQLException {
        final long id = createNote("a");
        cluster.awaitCaughtUp(java.time.Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update note set text = 'b' where id = " + id);
        return id;
    }

    private static String textOnPrimary(long id) throws SQLException {
        return stringOnPrimary(cluster, "select text from note where id = " + id);
    }

    private static void inTransaction(StatelessSession session, Consumer<StatelessSession> work) {
        session.getTransaction().begin();
        try {
            work.accept(session);
            session.getTransaction().commit();
        } finally {
            if (session.getTransaction().isActive()) {
                session.getTransaction().rollback();
            }
        }
    }

    @Test
    void autoCommitReads_goToReplicas() {
        try (StatelessSession session = open(emf)) {
            assertThat(node(session).isPrimary()).isFalse();
        }
    }

    @Test
    void readOnlyTransaction_readsOnReplica() {
        try (StatelessSession session = open(emf)) {
            session.getTransaction().begin();
            session.doWork(connection -> connection.setReadOnly(true));
            assertThat(node(session).isPrimary()).isFalse();
            session.getTransaction().commit();
        }
    }

    @Test
    void readWriteTransaction_getThenUpdate_readsThePrimary_soNothingIsLost() throws SQLException {
        final long id = staleNote();
        try (StatelessSession session = open(emf)) {
            inTransaction(session, s -> {
                final Note note = s.get(Note.class, id);
                assertThat(note.text).as("read where it will be written").isEqualTo("b");
                note.text = note.text + "+c";
                s.update(note);
            });
        }
        assertThat(textOnPrimary(id)).isEqualTo("b+c");
    }

    @Test
    void staleAutoCommitGet_thenUpdate_isRefusedNamingTheFixes() throws SQLException {
        final long id = staleNote();
        try (StatelessSession session = open(emf)) {
            final Note stale = session.get(Note.class, id);
            assertThat(stale.text).as("read from a paused standby").isEqualTo("a");
            stale.text = "c";
            assertThatThrownBy(() -> inTransaction(session, s -> s.update(stale)))
                    .isInstanceOf(StaleReplicaReadException.class)
                    .hasMessageContaining(Note.class.getName())
                    .hasMessageContaining("read table Note on a replica")
                    .hasMessageContaining("@Version")
                    .hasMessageContaining("Strategy.PRIMARY");
            assertThatThrownBy(() -> inTransaction(session, s -> s.upsert(stale)))
                    .isInstanceOf(StaleReplicaReadException.class);
            assertThatThrownBy(() -> inTransaction(session, s -> s.delete(stale)))
                    .isInstanceOf(StaleReplicaReadException.class);
        }
        assertThat(textOnPrimary(id))
                .as("nothing written over the primary's row")
                .isEqualTo("b");
    }

    @Test
    void staleQuery_thenUpdate_isRefused() throws SQLException {
        final long id = staleNote();
        try (StatelessSession session = open(emf)) {
            final Note stale = session.createSelectionQuery("from Note where id = :id", Note.class)
                    .setParameter("id", id)
                    .getSingleResult();
            assertThat(stale.text).isEqualTo("a");
            stale.text = "c";
            assertThatThrownBy(() -> inTransaction(session, s -> s.update(stale)))
                    .isInstanceOf(StaleReplicaReadException.class);
        }
        assertThat(textOnPrimary(id)).isEqualTo("b");
    }

    @Test
    void staleRead_underStaleRead_thenUpdateInTheTransaction_isRefused() throws SQLException {
        final long id = staleNote();
        try (var factory = RoutingItSupport.emf(cluster, Map.of(RoutingSettings.STRATEGY, Strategy.STALE_READ.name()));
                StatelessSession session = open(factory)) {
            assertThatThrownBy(() -> inTransaction(session, s -> {
                        final Note stale = s.get(Note.class, id);
                        assertThat(stale.text)
                                .as("STALE_READ reads replicas in transactions too")
                                .isEqualTo("a");
                        stale.text = "c";
                        s.update(stale);
                    }))
                    .isInstanceOf(StaleReplicaReadException.class);
        }
        assertThat(textOnPrimary(id)).isEqualTo("b");
    }

    @Test
    void updateAfterOnlyOtherTablesWereReadOnReplicas_isNotRefused() throws SQLException {
        final long id = staleNote();
        try (StatelessSession session = open(emf)) {
            assertThat(session.createSelectionQuery("select count(*) from Account", Long.class)
                            .getSingleResult())
                    .isZero();
            inTransaction(session, s -> {
                final Note note = s.get(Note.class, id);
                note.text = "c";
                s.update(note);
            });
        }
        assertThat(textOnPrimary(id)).isEqualTo("c");
    }

    @Test
    void staleReadInOneStatelessSession_updateOrDeleteThroughAnotherInTheSameScope_isRefusedNamingTheFix()
            throws SQLException {
        final long id = staleNote();
        try (RoutingScope request = RoutingScope.open(null)) {
            final Note stale;
            try (StatelessSession reader = open(emf)) {
                stale = reader.get(Note.class, id);
            }
            assertThat(stale.text).as("read from a paused standby").isEqualTo("a");
            stale.text = "c";
            try (StatelessSession writer = open(emf)) {
                assertThatThrownBy(() -> inTransaction(writer, s -> s.update(stale)))
                        .isInstanceOf(StaleReplicaReadException.class)
                        .hasMessageContaining(Note.class.getName())
                        .hasMessageContaining("another StatelessSession in this routing scope read table Note")
                        .hasMessageContaining("@Version")
                        .hasMessageContaining("Strategy.PRIMARY");
                assertThatThrownBy(() -> inTransaction(writer, s -> s.delete(stale)))
                        .isInstanceOf(StaleReplicaReadException.class);
            }
        }
        assertThat(textOnPrimary(id))
                .as("nothing written over the primary's row")
                .isEqualTo("b");
    }

    @Test
    void readInOneStatelessSessionOnThePrimary_updateThroughAnotherInTheSameScope_passes() throws SQLException {
        final long id = staleNote();
        try (RoutingScope request = RoutingScope.open(null)) {
            final Note[] fresh = new Note[1];
            try (StatelessSession reader = open(emf)) {
                // A read-write transaction of a stateless session reads on the primary.
                inTransaction(reader, s -> fresh[0] = s.get(Note.class, id));
            }
            assertThat(fresh[0].text).as("the primary's current text").isEqualTo("b");
            fresh[0].text = "b+c";
            try (StatelessSession writer = open(emf)) {
                inTransaction(writer, s -> s.update(fresh[0]));
            }
        }
        assertThat(textOnPrimary(id)).isEqualTo("b+c");
    }

    @Test
    void replicaReadInOneStatelessSession_anotherThatReadsOnThePrimaryItself_updates() throws SQLException {
        final long id = staleNote();
        try (RoutingScope request = RoutingScope.open(null)) {
            try (StatelessSession reader = open(emf)) {
                assertThat(reader.get(Note.class, id).text).isEqualTo("a");
            }
            try (StatelessSession writer = open(emf)) {
                inTransaction(writer, s -> {
                    final Note note = s.get(Note.class, id);
                    assertThat(note.text).as("read where it is written").isEqualTo("b");
                    note.text = note.text + "+c";
                    s.update(note);
                });
            }
        }
        assertThat(textOnPrimary(id)).isEqualTo("b+c");
    }

    @Test
    void aWrite_escalatesTheSession_itsLaterReadsSeeIt() throws SQLException {
        pauseAllStandbys();
        try (StatelessSession session = open(emf)) {
            final Note note = new Note("written");
            inTransaction(session, s -> s.insert(note));
            assertThat(session.get(Note.class, note.id))
                    .as("read after its own write")
                    .isNotNull();
            assertThat(node(session).isPrimary()).isTrue();
        }
    }

    @Test
    void jakartaDataRepository_readsReplicas_andNeverLosesAnUpdate() throws SQLException {
        final long id = staleNote();
        try (StatelessSession session = open(emf)) {
            final Notes notes = new Notes_(session);
            assertThat(notes.withText("a"))
                    .as("a finder outside a transaction reads a standby")
                    .hasSize(1);
            final Note stale = notes.byId(id);
            stale.text = "c";
            assertThatThrownBy(() -> inTransaction(session, s -> notes.update(stale)))
                    .as("Jakarta Data reports the refusal as an optimistic-locking failure")
                    .isInstanceOf(OptimisticLockingFailureException.class)
                    .hasCauseInstanceOf(StaleReplicaReadException.class);
        }
        assertThat(textOnPrimary(id)).isEqualTo("b");
        try (StatelessSession session = open(emf)) {
            final Notes notes = new Notes_(session);
            inTransaction(session, s -> {
                final Note note = notes.byId(id);
                assertThat(note.text).isEqualTo("b");
                note.text = "b+d";
                notes.update(note);
            });
            final Note inserted = new Note("new");
            inTransaction(session, s -> notes.insert(inserted));
            assertThat(notes.byId(inserted.id).text)
                    .as("its own write, with the standbys paused")
                    .isEqualTo("new");
        }
        assertThat(textOnPrimary(id)).isEqualTo("b+d");
    }
}
