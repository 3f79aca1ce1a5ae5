package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.awaitCaughtUpAsSeenBy;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.resource.jdbc.spi.PhysicalConnectionHandlingMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Monotonic reads within a unit of work, whatever sent a read to the primary: once one of its reads
 * ran there, a later read of the same unit on a replica must see at least as much, so a standby
 * that has not replayed what the primary showed cannot serve it. Each test pauses replay on both
 * standbys, adds a row on the primary behind their back, counts it on the primary in one way, then
 * counts again in the same EntityManager under the default strategy.
 *
 * <p>Under every connection handling mode Hibernate offers ({@code hibernate.connection.handling_mode}):
 * its default for a resource-local persistence unit (release after the transaction, which outside
 * one returns the connection after each statement), {@code DELAYED_ACQUISITION_AND_HOLD} (what
 * Spring's {@code HibernateJpaVendorAdapter} sets, so every Spring Boot application), and
 * {@code DELAYED_ACQUISITION_AND_RELEASE_BEFORE_TRANSACTION_COMPLETION} (what Quarkus' Hibernate ORM
 * extension sets unless the application sets another), and the others. Under a mode that holds the
 * connection, the replica connection of an earlier read is still bound when the next read comes.
 */
@ExtendWith(RoutingLeakCheck.class)
class ReadFloorIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /** The label of the persistence unit that leaves {@code hibernate.connection.handling_mode} unset. */
    private static final String HIBERNATE_DEFAULT = "Hibernate's default";

    /** A persistence unit per connection handling mode, by label; built once for the class. */
    private static final Map<String, EntityManagerFactory> BY_MODE = new LinkedHashMap<>();

    @BeforeAll
    static void persistenceUnitPerHandlingMode() {
        for (String mode : handlingModes().toList()) {
            final Map<String, Object> settings = new HashMap<>();
            // The first count of some tests must come from a paused standby, however long ago it replayed.
            settings.put(RoutingSettings.MAX_REPLICA_LAG, RoutingItSupport.LAG_BOUND_NO_TEST_REACHES);
            if (!mode.equals(HIBERNATE_DEFAULT)) {
                settings.put(AvailableSettings.CONNECTION_HANDLING, mode);
            }
            BY_MODE.put(mode, emf(cluster, settings));
        }
    }

    @AfterAll
    static void closePersistenceUnitsPerHandlingMode() {
        BY_MODE.values().forEach(EntityManagerFactory::close);
        BY_MODE.clear();
    }

    /** Hibernate's default for a resource-local persistence unit, then every mode by name. */
    static Stream<String> handlingModes() {
        return Stream.concat(
                Stream.of(HIBERNATE_DEFAULT),
                Arrays.stream(PhysicalConnectionHandlingMode.values()).map(Enum::name));
    }

    /** The persistence unit of {@code mode}, once its health check has seen the standbys caught up. */
    private static EntityManagerFactory underMode(String mode) {
        final EntityManagerFactory factory = BY_MODE.get(mode);
        awaitCaughtUpAsSeenBy(cluster, factory);
        return factory;
    }

    private static long count(EntityManager em) {
        return em.createQuery("select count(n) from Note n", Long.class).getSingleResult();
    }

    static Stream<Arguments> readsOnThePrimary() {
        return Stream.of(
                Arguments.of("Routing.with(PRIMARY)", (ToLongFunction<EntityManager>)
                        em -> Routing.with(Strategy.PRIMARY, () -> count(em))),
                Arguments.of("a PRIMARY scope", (ToLongFunction<EntityManager>) em -> {
                    try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
                        return count(em);
                    }
                }),
                Arguments.of("the PRIMARY query hint", (ToLongFunction<EntityManager>)
                        em -> em.createQuery("select count(n) from Note n", Long.class)
                                .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.PRIMARY))
                                .getSingleResult()));
    }

    /** Each way of reading on the primary under each connection handling mode. */
    static Stream<Arguments> readsOnThePrimaryUnderEachMode() {
        return handlingModes()
                .flatMap(mode -> readsOnThePrimary().map(read -> {
                    final Object[] how = read.get();
                    return Arguments.of(mode, how[0], how[1]);
                }));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("readsOnThePrimaryUnderEachMode")
    void replicaReadAfterAReadOnThePrimary_seesAtLeastWhatThePrimaryShowed(
            String mode, String how, ToLongFunction<EntityManager> onThePrimary) throws SQLException {
        final EntityManagerFactory factory = underMode(mode);
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
        try (EntityManager em = factory.createEntityManager()) {
            assertThat(onThePrimary.applyAsLong(em))
                    .as("%s: the count on the primary", how)
                    .isEqualTo(1);
            assertThat(count(em))
                    .as("%s, then the default strategy in the same unit of work: the count", how)
                    .isEqualTo(1);
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("no standby has the row, so the primary served the second count")
                    .isTrue();
        }
    }

    @Test
    void replicaReadAfterATransactionOnThePrimary_seesAtLeastWhatItShowed() throws SQLException {
        try (EntityManagerFactory primaryTransactions = emf(cluster, Map.of(RoutingSettings.TRANSACTIONS, "PRIMARY"))) {
            pauseAllStandbys();
            onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
            try (EntityManager em = primaryTransactions.createEntityManager()) {
                em.getTransaction().begin();
                assertThat(count(em))
                        .as("inside a transaction, under transactions=PRIMARY")
                        .isEqualTo(1);
                em.getTransaction().commit();
                assertThat(count(em))
                        .as("after it, in the same unit of work (open-session-in-view)")
                        .isEqualTo(1);
            }
        }
    }

    /**
     * Each way of reading on the primary under each connection handling mode, outside a transaction; and
     * {@code Routing.with(PRIMARY)} under each mode inside one.
     */
    static Stream<Arguments> replicaThenPrimaryUnderEachMode() {
        return Stream.concat(
                readsOnThePrimaryUnderEachMode().map(a -> Arguments.of(a.get()[0], false, a.get()[1], a.get()[2])),
                handlingModes().map(mode -> {
                    final Object[] how =
                            readsOnThePrimary().findFirst().orElseThrow().get();
                    return Arguments.of(mode, true, how[0], how[1]);
                }));
    }

    // Under a mode that holds the connection, the replica connection of the first count was still bound
    // for the third, which took it without asking whether its standby had replayed what the second
    // count showed: 0, 1, then 0 again.
    @ParameterizedTest(name = "{0}, in a transaction: {1}, {2}")
    @MethodSource("replicaThenPrimaryUnderEachMode")
    void replicaRead_thenOneOnThePrimary_thenAReplicaRead_neverGoesBackInTime(
            String mode, boolean inTransaction, String how, ToLongFunction<EntityManager> onThePrimary)
            throws SQLException {
        final EntityManagerFactory factory = underMode(mode);
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
        try (EntityManager em = factory.createEntityManager()) {
            if (inTransaction) {
                em.getTransaction().begin();
            }
            assertThat(count(em)).as("first, on a paused standby").isZero();
            assertThat(onThePrimary.applyAsLong(em))
                    .as("then on the primary (%s)", how)
                    .isEqualTo(1);
            assertThat(count(em))
                    .as("then again under the default strategy: not older than the primary's answer")
                    .isEqualTo(1);
            assertThat(count(em))
                    .as("and the next read too: the unit of work keeps off the standby that is behind")
                    .isEqualTo(1);
            if (inTransaction) {
                em.getTransaction().commit();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("handlingModes")
    void replicaReadsWithoutAReadOnThePrimary_stayOnTheStandbys(String mode) {
        final EntityManagerFactory factory = underMode(mode);
        // The floor costs nothing to a unit of work that never read on the primary: its reads stay on a
        // standby, paused or not.
        pauseAllStandbys();
        try (EntityManager em = factory.createEntityManager()) {
            count(em);
            count(em);
            assertThat(servedBy(cluster, em).isPrimary()).isFalse();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("handlingModes")
    void replicaThatReplayedWhatThePrimaryShowed_keepsServingTheUnitOfWork(String mode) {
        final EntityManagerFactory factory = underMode(mode);
        createNote("every standby has this");
        cluster.awaitCaughtUp(java.time.Duration.ofSeconds(30));
        try (EntityManager em = factory.createEntityManager()) {
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("first, on a standby")
                    .isFalse();
            assertThat((long) Routing.with(Strategy.PRIMARY, () -> count(em)))
                    .as("then on the primary")
                    .isEqualTo(1);
            assertThat(count(em)).as("then again under the default strategy").isEqualTo(1);
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("the standbys have replayed what the primary showed: a standby serves again")
                    .isFalse();
        }
    }
}
