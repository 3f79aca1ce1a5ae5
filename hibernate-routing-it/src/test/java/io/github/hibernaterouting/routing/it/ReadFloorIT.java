package io.github.hibernaterouting.routing.it;

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
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;
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
 */
@ExtendWith(RoutingLeakCheck.class)
class ReadFloorIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

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

    @ParameterizedTest(name = "{0}")
    @MethodSource("readsOnThePrimary")
    void replicaReadAfterAReadOnThePrimary_seesAtLeastWhatThePrimaryShowed(
            String how, ToLongFunction<EntityManager> onThePrimary) throws SQLException {
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
        try (EntityManager em = emf.createEntityManager()) {
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

    @ParameterizedTest(name = "in a transaction: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void replicaRead_thenOneOnThePrimary_thenAReplicaRead_neverGoesBackInTime(boolean inTransaction)
            throws SQLException {
        pauseAllStandbys();
        onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
        try (EntityManager em = emf.createEntityManager()) {
            if (inTransaction) {
                em.getTransaction().begin();
            }
            assertThat(count(em)).as("first, on a paused standby").isZero();
            assertThat((long) Routing.with(Strategy.PRIMARY, () -> count(em)))
                    .as("then on the primary")
                    .isEqualTo(1);
            assertThat(count(em))
                    .as("then again under the default strategy: not older than the primary's answer")
                    .isEqualTo(1);
            if (inTransaction) {
                em.getTransaction().commit();
            }
        }
    }

    @Test
    void replicaReadsWithoutAReadOnThePrimary_stayOnTheStandbys() {
        // The floor costs nothing to a unit of work that never read on the primary: its reads stay on a
        // standby, paused or not.
        pauseAllStandbys();
        try (EntityManager em = emf.createEntityManager()) {
            count(em);
            count(em);
            assertThat(servedBy(cluster, em).isPrimary()).isFalse();
        }
    }
}
