package io.github.hibernaterouting.testing;

import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.container;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * {@link RoutingLeakCheck} fails a test that leaves a connection borrowed from a pool of a watched
 * persistence unit, whether the unit stays open or the test closes it, and passes tests whose
 * connections come back, also a little late. The test classes below leak on purpose; they run only
 * inside {@link EngineTestKit}, on this class's cluster. Also checks {@link RoutingTestSupport}.
 */
class RoutingLeakCheckIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(1);

    static PostgresCluster cluster;
    private static volatile boolean inEngineTestKit;

    static boolean inEngineTestKit() {
        return inEngineTestKit;
    }

    @BeforeAll
    static void createTable() throws SQLException {
        cluster = DB.cluster();
        onPrimary(cluster, "create table leak_check (id bigint primary key)");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    @BeforeEach
    void emptyTable() throws SQLException {
        onPrimary(cluster, "delete from leak_check");
    }

    /** Runs a test class that leaks, with a settle time of 2 s, so that each leak costs only that. */
    private static EngineExecutionResults runLeaking(Class<?> testClass) {
        System.setProperty(RoutingLeakCheck.SETTLE_SECONDS_PROPERTY, "2");
        try {
            return run(testClass);
        } finally {
            System.clearProperty(RoutingLeakCheck.SETTLE_SECONDS_PROPERTY);
        }
    }

    /** Runs a test class with the default settle time (10 s), as a user's tests run. */
    private static EngineExecutionResults run(Class<?> testClass) {
        inEngineTestKit = true;
        try {
            return EngineTestKit.engine("junit-jupiter")
                    .selectors(selectClass(testClass))
                    .execute();
        } finally {
            inEngineTestKit = false;
        }
    }

    /** Ends a leaked unit of work, whatever state its connection is in. */
    private static void discard(EntityManager em) {
        if (em == null) {
            return;
        }
        try {
            if (em.getTransaction().isActive()) {
                em.getTransaction().rollback();
            }
        } catch (RuntimeException e) {
            // Its connection was aborted when the persistence unit closed.
        }
        try {
            em.close();
        } catch (RuntimeException e) {
            // Same.
        }
    }

    /** A unit of work that wrote in a transaction it never ends: its primary connection stays borrowed. */
    private static EntityManager unfinishedWrite(EntityManagerFactory emf, long id) {
        final EntityManager em = emf.createEntityManager();
        em.getTransaction().begin();
        em.createNativeQuery("insert into leak_check (id) values (" + id + ")").executeUpdate();
        return em;
    }

    @Test
    void
            aTestThatLeavesAConnectionBorrowed_fails_namingThePersistenceUnitAndThePool_andSoDoesClosingTheUnitInAfterAll() {
        try {
            final EngineExecutionResults results = runLeaking(LeavesATransactionOpen.class);

            results.testEvents().assertStatistics(stats -> stats.started(1).failed(1));
            results.testEvents()
                    .assertThatEvents()
                    .haveExactly(
                            1,
                            event(
                                    test("writesAndForgetsTheEntityManager"),
                                    finishedWithFailure(
                                            instanceOf(AssertionError.class),
                                            message(m -> m.contains(
                                                            "Connections still borrowed from hibernate-routing's pools 2 s after the test, in persistence unit 'leaky'")
                                                    && m.contains("primary 1 active")
                                                    && !m.contains("replica1")))));
            results.containerEvents()
                    .assertThatEvents()
                    .haveExactly(
                            1,
                            event(
                                    container(LeavesATransactionOpen.class),
                                    finishedWithFailure(
                                            message(m -> m.contains("when persistence unit 'leaky' was closed")
                                                    && m.contains("primary 1 active")))));
        } finally {
            discard(LeavesATransactionOpen.leaked);
        }
    }

    @Test
    void aTestThatClosesItsPersistenceUnitWhileAConnectionIsBorrowed_fails() throws SQLException {
        try {
            final EngineExecutionResults results = runLeaking(ClosesItsUnitWithAConnectionBorrowed.class);

            results.testEvents()
                    .assertThatEvents()
                    .haveExactly(
                            1,
                            event(
                                    test("closesTheUnitFirst"),
                                    finishedWithFailure(message(
                                            m -> m.contains("when persistence unit 'closed-with-a-leak' was closed")
                                                    && m.contains("primary 1 active")))));
        } finally {
            discard(ClosesItsUnitWithAConnectionBorrowed.leaked);
        }
        assertThat(countOnPrimary(cluster, "leak_check"))
                .as("the unfinished write was rolled back")
                .isZero();
    }

    @Test
    void aPersistenceUnitWatchedThroughASupplier_isChecked() {
        try {
            final EngineExecutionResults results = runLeaking(WatchesAnApplicationsUnit.class);

            results.testEvents()
                    .assertThatEvents()
                    .haveExactly(
                            1,
                            event(
                                    test("leaksThroughTheApplicationsUnit"),
                                    finishedWithFailure(
                                            message(m -> m.contains("in persistence unit 'application'")))));
        } finally {
            discard(WatchesAnApplicationsUnit.leaked);
            WatchesAnApplicationsUnit.emf.close();
        }
    }

    @Test
    void testsWhoseConnectionsComeBack_pass_alsoWhenOneComesBackLate() {
        final EngineExecutionResults results = run(ReturnsItsConnections.class);

        results.allEvents().assertStatistics(stats -> stats.failed(0));
        results.testEvents().assertStatistics(stats -> stats.succeeded(3));
    }

    @Test
    void settings_overridesWin_andNullRemoves() {
        final Map<String, Object> overrides = new HashMap<>();
        overrides.put(RoutingSettings.HEALTH_CHECK_INTERVAL, "1h");
        overrides.put(RoutingSettings.REPLICA_URLS, null);
        final Map<String, Object> settings = RoutingTestSupport.settings(cluster, overrides);

        assertThat(settings)
                .containsEntry("jakarta.persistence.jdbc.url", cluster.primary().jdbcUrl())
                .containsEntry("jakarta.persistence.jdbc.user", cluster.user())
                .containsEntry(RoutingSettings.HEALTH_CHECK_INTERVAL, "1h")
                .containsEntry(RoutingSettings.CIRCUIT_BREAKER_OPEN_DURATION, "200ms")
                .containsEntry(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "5")
                .containsEntry(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "5")
                .containsEntry("hibernate.hbm2ddl.auto", "none")
                .doesNotContainKey(RoutingSettings.REPLICA_URLS);
        assertThat(RoutingTestSupport.settings(cluster, Map.of()))
                .containsEntry(RoutingSettings.REPLICA_URLS, cluster.standby(1).jdbcUrl());
    }

    @Test
    void servedBy_asksTheServer_andAwaitReplicasUp_waitsForAStartedReplica() {
        final EntityManagerFactory emf = RoutingTestSupport.emf("support", cluster, Map.of());
        try (emf) {
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(RoutingTestSupport.servedBy(cluster, em))
                        .as(() -> "routing: " + RoutingStatus.of(emf))
                        .isEqualTo(cluster.standby(1));
            }
            cluster.stop(cluster.standby(1));
            // The health check notices it in the background: poll.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (RoutingStatus.of(emf).nodes().get(1).up()) {
                assertThat(System.nanoTime())
                        .as(() -> "the health check notices the stopped replica; " + RoutingStatus.of(emf))
                        .isLessThan(deadline);
                RoutingTestSupport.sleep(20);
            }
            cluster.start(cluster.standby(1));
            RoutingTestSupport.awaitReplicasUp(emf);
            assertThat(RoutingStatus.of(emf).nodes()).allMatch(RoutingStatus.Node::up);
        }
    }

    // ---- test classes run by the tests above ------------------------------------------------

    @ExtendWith(RoutingLeakCheck.class)
    @EnabledIf("io.github.hibernaterouting.testing.RoutingLeakCheckIT#inEngineTestKit")
    static class LeavesATransactionOpen {
        static EntityManagerFactory emf;
        static EntityManager leaked;

        @BeforeAll
        static void start() {
            emf = RoutingTestSupport.emf("leaky", cluster, Map.of());
        }

        @AfterAll
        static void stop() {
            emf.close(); // before the unit of work ends: the class fails too
        }

        @Test
        void writesAndForgetsTheEntityManager() {
            leaked = unfinishedWrite(emf, 1);
        }
    }

    @ExtendWith(RoutingLeakCheck.class)
    @EnabledIf("io.github.hibernaterouting.testing.RoutingLeakCheckIT#inEngineTestKit")
    static class ClosesItsUnitWithAConnectionBorrowed {
        static EntityManager leaked;

        @Test
        void closesTheUnitFirst() {
            final EntityManagerFactory emf = RoutingTestSupport.emf("closed-with-a-leak", cluster, Map.of());
            leaked = unfinishedWrite(emf, 2);
            emf.close();
        }
    }

    /** An application's own persistence unit, not built by {@link RoutingTestSupport}. */
    @EnabledIf("io.github.hibernaterouting.testing.RoutingLeakCheckIT#inEngineTestKit")
    static class WatchesAnApplicationsUnit {
        static EntityManagerFactory emf;
        static EntityManager leaked;

        @RegisterExtension
        static final RoutingLeakCheck LEAKS = new RoutingLeakCheck().watching(() -> emf);

        @BeforeAll
        static void start() {
            final PersistenceConfiguration configuration = new PersistenceConfiguration("application");
            RoutingTestSupport.settings(cluster, Map.of()).forEach(configuration::property);
            emf = configuration.createEntityManagerFactory();
        }

        @Test
        void leaksThroughTheApplicationsUnit() {
            leaked = unfinishedWrite(emf, 3);
        }
    }

    @ExtendWith(RoutingLeakCheck.class)
    @EnabledIf("io.github.hibernaterouting.testing.RoutingLeakCheckIT#inEngineTestKit")
    static class ReturnsItsConnections {
        static EntityManagerFactory emf;

        @BeforeAll
        static void start() {
            emf = RoutingTestSupport.emf("tidy", cluster, Map.of());
        }

        @AfterAll
        static void stop() {
            emf.close();
        }

        @Test
        void readsAndWrites_inTryWithResources() {
            try (EntityManager em = emf.createEntityManager()) {
                em.createNativeQuery("select count(*) from leak_check").getSingleResult();
                em.getTransaction().begin();
                em.createNativeQuery("insert into leak_check (id) values (4)").executeUpdate();
                em.getTransaction().commit();
            }
        }

        @Test
        void aUnitOfWorkEndedByAnotherThread_shortlyAfterTheTest() {
            final EntityManager em = unfinishedWrite(emf, 5);
            final Thread finisher = new Thread(() -> {
                // Part of what is tested: the connection comes back after the test ended, within the check's settle
                // time (10 s by default).
                RoutingTestSupport.sleep(300);
                em.getTransaction().rollback();
                em.close();
            });
            finisher.start();
        }

        @Test
        void aPersistenceUnitOpenedAndClosedInTheTest() {
            final EntityManagerFactory own = RoutingTestSupport.emf("own", cluster, Map.of());
            try (own;
                    EntityManager em = own.createEntityManager()) {
                em.createNativeQuery("select 1").getSingleResult();
            }
        }
    }
}
