package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.ReplicaWriteException;
import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.replication.LogSequenceNumber;
import org.slf4j.LoggerFactory;

/**
 * The strategies and the levels that set them (persistence unit, scope, EntityManager property,
 * query hint), the most specific winning; {@code REPLICA} refuses a write before sending anything.
 */
@ExtendWith(RoutingLeakCheck.class)
class StrategyLevelsIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    @Test
    void replicaStrategy_write_failsLoudly_andWritesNothing() throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.setProperty(RoutingSettings.STRATEGY, Strategy.REPLICA);
            assertThat(servedBy(cluster, em).isPrimary()).isFalse();
            em.getTransaction().begin();
            assertThat(thrownBy(() -> em.createNativeQuery("insert into note (id, text) values (1, 'forbidden')")
                            .executeUpdate()))
                    .isInstanceOf(ReplicaWriteException.class)
                    .hasMessageContaining("REPLICA")
                    .hasMessageContaining("Strategy.PRIMARY")
                    .hasMessageContaining("nothing was sent");
            em.getTransaction().rollback();
        }
        try (EntityManager em = emf.createEntityManager()) {
            em.setProperty(RoutingSettings.STRATEGY, "replica");
            em.getTransaction().begin();
            assertThat(thrownBy(() -> {
                        em.persist(new Note("forbidden"));
                        em.flush();
                    }))
                    .isInstanceOf(ReplicaWriteException.class);
            em.getTransaction().rollback();
        }
        assertThat(countOnPrimary(cluster, "note")).isZero();
    }

    @Test
    void strategyLevels_mostSpecificWins() throws SQLException {
        final EntityManagerFactory primaryByDefault = emf(cluster, Map.of(RoutingSettings.STRATEGY, "PRIMARY"));
        try (primaryByDefault) {
            try (EntityManager em = primaryByDefault.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("persistence-unit default PRIMARY")
                        .isTrue();
            }
            try (RoutingScope ignored = RoutingScope.open(Strategy.STALE_READ);
                    EntityManager em = primaryByDefault.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("scope STALE_READ beats the default")
                        .isFalse();
                em.setProperty(RoutingSettings.STRATEGY, "PRIMARY");
                em.getTransaction().begin(); // session properties are read when a unit of work starts
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("session property PRIMARY beats the scope")
                        .isTrue();
                final Number port = (Number) em.createNativeQuery(
                                "/*+ " + RoutingHints.strategy(Strategy.REPLICA) + " */ select inet_server_port()")
                        .getSingleResult();
                assertThat(cluster.nodeForPort(port.intValue()).isPrimary())
                        .as("inside a transaction already on the primary, reads stay there")
                        .isTrue();
                em.getTransaction().commit();
            }
            try (EntityManager em = primaryByDefault.createEntityManager()) {
                em.setProperty(RoutingSettings.STRATEGY, "PRIMARY");
                final Object port = em.createNativeQuery("select inet_server_port()")
                        .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.STALE_READ))
                        .getSingleResult();
                assertThat(cluster.nodeForPort(((Number) port).intValue()).isPrimary())
                        .as("query hint beats the session property")
                        .isFalse();
            }
        }
        // The hint on a JPQL query, seen in the data: replicas are paused and hold the old name.
        final long id = createAccount("old", 1);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        pauseAllStandbys();
        onPrimary(cluster, "update account set name = 'new' where id = " + id);
        try (EntityManager em = emf.createEntityManager()) {
            final String jpql = "select a.name from Account a where a.id = :id";
            assertThat(em.createQuery(jpql, String.class).setParameter("id", id).getSingleResult())
                    .isEqualTo("old");
            assertThat(em.createQuery(jpql, String.class)
                            .setParameter("id", id)
                            .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.PRIMARY))
                            .getSingleResult())
                    .isEqualTo("new");
            assertThat(Routing.with(
                            Strategy.PRIMARY,
                            () -> em.createQuery(jpql, String.class)
                                    .setParameter("id", id)
                                    .getSingleResult()))
                    .as("programmatic scope")
                    .isEqualTo("new");
        }
    }

    /** The node that ran {@code select inet_server_port()} under {@code strategy} as a query hint. */
    private static Node servedUnderHint(EntityManager em, Strategy strategy) {
        final Number port = (Number) em.createNativeQuery("select inet_server_port()")
                .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(strategy))
                .getSingleResult();
        return cluster.nodeForPort(port.intValue());
    }

    @Test
    void primaryFloor_isNotWeakenedByAMoreSpecificLevel_whileAPrimaryStrategyIs() {
        try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedUnderHint(em, Strategy.STALE_READ).isPrimary())
                        .as("a plain PRIMARY scope: the more specific hint wins")
                        .isFalse();
            }
        }
        try (RoutingScope ignored =
                RoutingScope.builder().floor(Strategy.PRIMARY).open()) {
            for (Strategy weaker : new Strategy[] {Strategy.STALE_READ, Strategy.REPLICA, Strategy.READ_AFTER_WRITE}) {
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(servedUnderHint(em, weaker).isPrimary())
                            .as("a %s hint under a PRIMARY floor", weaker)
                            .isTrue();
                }
                try (EntityManager em = emf.createEntityManager()) {
                    em.setProperty(RoutingSettings.STRATEGY, weaker);
                    assertThat(servedBy(cluster, em).isPrimary())
                            .as("a %s EntityManager property under a PRIMARY floor", weaker)
                            .isTrue();
                }
                assertThat(Routing.with(weaker, () -> {
                            try (EntityManager em = emf.createEntityManager()) {
                                return servedBy(cluster, em).isPrimary();
                            }
                        }))
                        .as("a nested %s scope under a PRIMARY floor", weaker)
                        .isTrue();
            }
        }
    }

    @Test
    void readAfterWriteFloor_liftsStaleReadToReadAfterWrite() {
        try (RoutingScope ignored =
                        RoutingScope.builder().floor(Strategy.READ_AFTER_WRITE).open();
                EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.persist(new Note("written"));
            em.getTransaction().commit();
            assertThat(servedUnderHint(em, Strategy.STALE_READ).isPrimary())
                    .as(
                            "after the unit of work wrote, a STALE_READ hint under a READ_AFTER_WRITE floor reads its write")
                    .isTrue();
        }
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.persist(new Note("written"));
            em.getTransaction().commit();
            assertThat(servedUnderHint(em, Strategy.STALE_READ).isPrimary())
                    .as("without the floor, the hint reads a replica")
                    .isFalse();
        }
    }

    @Test
    void positionFloor_holdsForStaleReadAndReplicaReads() throws SQLException {
        // A commit every standby replayed just before the pause: the paused one stays within the lag bound.
        createNote("replayed everywhere");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        final Node paused = cluster.standby(1);
        cluster.pauseReplay(paused);
        final long id = createNote("behind the paused standby");
        final ConsistencyToken position = ReadYourWrites.currentPosition(emf);
        // Standby 2 has the position, and the library knows it: the LSN gate would wait only 100 ms for it,
        // which a slow machine can take, and a REPLICA read that finds no replica fails.
        cluster.awaitReplay(cluster.standby(2), LogSequenceNumber.valueOf(position.position()), Duration.ofSeconds(30));
        runtime(emf).checkReplicasNow();
        try (RoutingScope ignored = RoutingScope.builder().floor(position).open()) {
            for (Strategy weaker : new Strategy[] {Strategy.STALE_READ, Strategy.REPLICA}) {
                for (int i = 0; i < 4; i++) {
                    try (EntityManager em = emf.createEntityManager()) {
                        em.setProperty(RoutingSettings.STRATEGY, weaker);
                        final Note note = em.find(Note.class, id);
                        final Node node = servedBy(cluster, em);
                        assertThat(note)
                                .as("read #%s under %s and a position floor, served by %s", i, weaker, node)
                                .isNotNull();
                        assertThat(node)
                                .as("read #%s under %s and a position floor (%s)", i, weaker, routingState(emf))
                                .isNotEqualTo(paused)
                                .isNotEqualTo(cluster.primary());
                    }
                }
            }
        }
    }

    @Test
    void namedQueryWithThePlainRoutingHint_isReportedOnceAtBootstrap_withTheFormThatWorks() {
        final Logger logger = (Logger) LoggerFactory.getLogger("io.github.hibernaterouting");
        final ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try (EntityManagerFactory hinted = RoutingTestSupport.emf(
                "routing-it-hinted", cluster, RoutingItSupport.withoutCache(Map.of()), HintedNote.class)) {
            for (int i = 0; i < 3; i++) {
                try (EntityManager em = hinted.createEntityManager()) {
                    final Number port = (Number)
                            em.createNamedQuery("HintedNote.portWithPlainHint").getSingleResult();
                    assertThat(cluster.nodeForPort(port.intValue()).isPrimary())
                            .as("Hibernate drops the plain hint: the query runs where the session's strategy says")
                            .isFalse();
                    em.createNamedQuery("HintedNote.plainHint").getResultList();
                    em.createNamedQuery("HintedNote.databaseHint").getResultList();
                }
            }
        } finally {
            logger.detachAppender(logged);
        }
        final List<String> warnings = logged.list.stream()
                .filter(event -> event.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage)
                .filter(message -> message.contains(RoutingSettings.STRATEGY))
                .toList();
        assertThat(warnings)
                .as("one warning per named query with the plain hint, at bootstrap")
                .hasSize(2)
                .anySatisfy(message -> assertThat(message).contains("'HintedNote.plainHint'"))
                .anySatisfy(message -> assertThat(message).contains("'HintedNote.portWithPlainHint'"))
                .allSatisfy(message -> assertThat(message)
                        .contains("hibernate.routing.strategy=PRIMARY")
                        .contains("@QueryHint(name = \"" + RoutingHints.DATABASE_HINT
                                + "\", value = \"hibernate.routing.strategy=PRIMARY\")")
                        .contains("RoutingHints.DATABASE_HINT")
                        .contains("RoutingHints.strategy(Strategy.PRIMARY)"))
                .noneSatisfy(message -> assertThat(message).contains("HintedNote.databaseHint"));
    }

    /** What {@code work} threw; fails the test if it threw nothing. */
    private static Throwable thrownBy(Runnable work) {
        try {
            work.run();
        } catch (RuntimeException e) {
            return e;
        }
        throw new AssertionError("expected an exception");
    }
}
