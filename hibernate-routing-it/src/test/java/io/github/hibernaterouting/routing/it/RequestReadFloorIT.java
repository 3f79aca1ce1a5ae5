package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.awaitCaughtUpAsSeenBy;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Monotonic reads across the units of work of one routing scope, as a request opens one: Spring
 * without open-session-in-view, and Quarkus' transaction- and request-scoped sessions, use several
 * EntityManagers per request. Once one of them read on the primary, a later one of the same scope
 * reads on a standby only if that standby has replayed what the primary showed. Each test pauses
 * replay on both standbys, adds a row on the primary behind their back, counts it on the primary in
 * a first EntityManager, closes it, and counts again in a second one under the default strategy.
 */
@ExtendWith(RoutingLeakCheck.class)
class RequestReadFloorIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /** A persistence unit whose lag bound no paused standby reaches: only the read floor keeps it off one. */
    private static EntityManagerFactory patient;

    @BeforeAll
    static void patientPersistenceUnit() {
        patient = emf(cluster, Map.of(RoutingSettings.MAX_REPLICA_LAG, RoutingItSupport.LAG_BOUND_NO_TEST_REACHES));
    }

    @AfterAll
    static void closePatientPersistenceUnit() {
        if (patient != null) {
            patient.close();
        }
    }

    @BeforeEach
    void patientSeesTheStandbysCaughtUp() {
        awaitCaughtUpAsSeenBy(cluster, patient);
    }

    private static long count(EntityManager em) {
        return em.createQuery("select count(n) from Note n", Long.class).getSingleResult();
    }

    static Stream<Arguments> readsOnThePrimary() {
        return Stream.of(
                Arguments.of("Routing.with(PRIMARY)", (ToLongFunction<EntityManager>)
                        em -> Routing.with(Strategy.PRIMARY, () -> count(em))),
                Arguments.of("a nested PRIMARY scope", (ToLongFunction<EntityManager>) em -> {
                    try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
                        return count(em);
                    }
                }),
                Arguments.of("the PRIMARY query hint", (ToLongFunction<EntityManager>)
                        em -> em.createQuery("select count(n) from Note n", Long.class)
                                .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.PRIMARY))
                                .getSingleResult()));
    }

    // Each EntityManager kept its own floor: the second one, which had read nothing on the primary,
    // took a paused standby and counted 0 after the first had counted 1.
    @ParameterizedTest(name = "{0}")
    @MethodSource("readsOnThePrimary")
    void nextEntityManagerOfTheScope_afterAReadOnThePrimary_neverGoesBackInTime(
            String how, ToLongFunction<EntityManager> onThePrimary) throws SQLException {
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
        try (RoutingScope ignored = RoutingScope.open(Strategy.READ_AFTER_WRITE)) {
            try (EntityManager first = patient.createEntityManager()) {
                assertThat(onThePrimary.applyAsLong(first))
                        .as("%s: the count on the primary", how)
                        .isEqualTo(1);
            }
            try (EntityManager second = patient.createEntityManager()) {
                assertThat(count(second))
                        .as("%s, then the default strategy in the next EntityManager of the scope", how)
                        .isEqualTo(1);
                assertThat(servedBy(cluster, second).isPrimary())
                        .as("no standby has the row, so the primary served the second EntityManager")
                        .isTrue();
            }
        }
    }

    @Test
    void nextEntityManagerOfTheScope_afterATransactionOnThePrimary_neverGoesBackInTime() throws SQLException {
        try (EntityManagerFactory primaryTransactions = emf(
                cluster,
                Map.of(
                        RoutingSettings.TRANSACTIONS,
                        "PRIMARY",
                        RoutingSettings.MAX_REPLICA_LAG,
                        RoutingItSupport.LAG_BOUND_NO_TEST_REACHES))) {
            awaitCaughtUpAsSeenBy(cluster, primaryTransactions);
            pauseAllStandbys();
            onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
            try (RoutingScope ignored = RoutingScope.open(Strategy.READ_AFTER_WRITE)) {
                try (EntityManager first = primaryTransactions.createEntityManager()) {
                    first.getTransaction().begin();
                    assertThat(count(first))
                            .as("inside a transaction, under transactions=PRIMARY")
                            .isEqualTo(1);
                    first.getTransaction().commit();
                }
                try (EntityManager second = primaryTransactions.createEntityManager()) {
                    assertThat(count(second))
                            .as("outside a transaction, in the next EntityManager of the scope")
                            .isEqualTo(1);
                }
            }
        }
    }

    @Test
    void nextEntityManagerOfTheScope_readsOnAStandbyThatReplayedWhatThePrimaryShowed() throws SQLException {
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'one standby has this')");
        final Node caughtUp = cluster.standby(2);
        cluster.resumeReplay(caughtUp);
        // Only the standby that replays: the other stays paused, and the library must have seen both.
        awaitCaughtUpAsSeenBy(cluster, patient);
        try (RoutingScope ignored = RoutingScope.open(Strategy.READ_AFTER_WRITE)) {
            try (EntityManager first = patient.createEntityManager()) {
                assertThat((long) Routing.with(Strategy.PRIMARY, () -> count(first)))
                        .as("the count on the primary")
                        .isEqualTo(1);
            }
            for (int unit = 0; unit < 4; unit++) {
                try (EntityManager next = patient.createEntityManager()) {
                    assertThat(count(next))
                            .as("EntityManager %s after the one that read on the primary", unit + 2)
                            .isEqualTo(1);
                    assertThat(servedBy(cluster, next))
                            .as("the standby that replayed the row serves it, never the paused one")
                            .isEqualTo(caughtUp);
                }
            }
        }
    }

    // Each EntityManager chose its standby anew (round-robin): after one had counted 1 on the standby
    // that replayed the row, the next took the paused one and counted 0.
    @Test
    void nextEntityManagerOfTheScope_afterAReadOnAStandby_keepsToThatStandby() throws SQLException {
        final Node paused = cluster.standby(1);
        final Node ahead = cluster.standby(2);
        cluster.pauseReplay(paused);
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'one standby has this')");
        final ConsistencyToken insert =
                ConsistencyToken.ofLsn(cluster.currentWalLsn().asString());
        awaitCaughtUpAsSeenBy(cluster, patient);
        try (RoutingScope ignored = RoutingScope.open(Strategy.READ_AFTER_WRITE)) {
            // Only the first EntityManager needs the row: a nested scope asks for its position.
            try (RoutingScope needsTheRow =
                            RoutingScope.builder().minimum(insert).open();
                    EntityManager first = patient.createEntityManager()) {
                assertThat(count(first))
                        .as("the count on the standby that replayed the row")
                        .isEqualTo(1);
                assertThat(servedBy(cluster, first)).isEqualTo(ahead);
            }
            for (int unit = 0; unit < 4; unit++) {
                try (EntityManager next = patient.createEntityManager()) {
                    assertThat(count(next))
                            .as("EntityManager %s of the scope, which needs no position of its own", unit + 2)
                            .isEqualTo(1);
                    assertThat(servedBy(cluster, next))
                            .as("never the standby that is behind what the first one showed")
                            .isNotEqualTo(paused);
                }
            }
        }
    }

    @Test
    void entityManagersOfAScopeThatNeverReadOnThePrimary_stayOnTheStandbys() {
        pauseAllStandbys();
        try (RoutingScope ignored = RoutingScope.open(Strategy.READ_AFTER_WRITE)) {
            for (int unit = 0; unit < 3; unit++) {
                try (EntityManager em = patient.createEntityManager()) {
                    count(em);
                    assertThat(servedBy(cluster, em).isPrimary())
                            .as("EntityManager %s: no read on the primary, no floor", unit + 1)
                            .isFalse();
                }
            }
        }
    }

    @Test
    void entityManagersOutsideAScope_keepTheirOwnFloor() {
        // Outside a scope nothing ties two EntityManagers together: the second one reads on a standby,
        // as before (the documented limit of monotonic reads without a request scope).
        pauseAllStandbys();
        try (EntityManager first = patient.createEntityManager()) {
            Routing.with(Strategy.PRIMARY, () -> count(first));
        }
        try (EntityManager second = patient.createEntityManager()) {
            count(second);
            assertThat(servedBy(cluster, second).isPrimary()).isFalse();
        }
    }

    @Test
    void scopeFloor_outlivesANestedScope() throws SQLException {
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
        try (RoutingScope ignored = RoutingScope.open(Strategy.READ_AFTER_WRITE)) {
            try (RoutingScope nested = RoutingScope.open(Strategy.READ_AFTER_WRITE);
                    EntityManager first = patient.createEntityManager()) {
                assertThat((long) Routing.with(Strategy.PRIMARY, () -> count(first)))
                        .isEqualTo(1);
            }
            try (EntityManager second = patient.createEntityManager()) {
                assertThat(count(second))
                        .as("in the enclosing scope, after the nested one read on the primary")
                        .isEqualTo(1);
            }
        }
    }
}
