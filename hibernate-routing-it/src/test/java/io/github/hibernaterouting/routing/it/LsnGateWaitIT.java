package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The LSN gate waits at most once per unit of work, and not again for a position no replica is
 * moving towards; once replay resumes, replicas serve that position again.
 */
@ExtendWith(RoutingLeakCheck.class)
class LsnGateWaitIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /** The gate's wait: long enough to tell apart from a round trip, so the elapsed figures in the messages say something. */
    private static final long WAIT_MILLIS = 300;

    /** Runs three statements in one unit of work under {@code position}; returns each one's elapsed milliseconds. */
    private static long[] threeStatements(EntityManagerFactory factory, ConsistencyToken position) {
        final long[] elapsed = new long[3];
        try (RoutingScope ignored = RoutingScope.builder().minimum(position).open();
                EntityManager em = factory.createEntityManager()) {
            for (int i = 0; i < 3; i++) {
                final long start = System.nanoTime();
                em.createNativeQuery("select 1").getSingleResult();
                elapsed[i] = Duration.ofNanos(System.nanoTime() - start).toMillis();
            }
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("no replica has the position")
                    .isTrue();
        }
        return elapsed;
    }

    /** How many units of work the gate ended with {@code outcome} (the {@code hibernate.routing.lsn_gate} counter). */
    private static long gate(SimpleMeterRegistry meters, String outcome) {
        final Counter counter = meters.find("hibernate.routing.lsn_gate")
                .tag("outcome", outcome)
                .counter();
        return counter == null ? 0 : (long) counter.count();
    }

    /** Every gate outcome counted so far, for the messages. */
    private static Map<String, Long> gateOutcomes(SimpleMeterRegistry meters) {
        final Map<String, Long> outcomes = new TreeMap<>();
        for (String outcome : new String[] {"known", "checked", "waited", "timed-out", "stalled"}) {
            outcomes.put(outcome, gate(meters, outcome));
        }
        return outcomes;
    }

    // The verdicts count what the gate did (its outcome per unit of work), never how long a statement took: on a
    // busy machine a statement that did not wait can still take longer than the wait. The elapsed times are in the
    // messages. Only the first unit's lower bound is timed, and the gate's deadline guarantees it on any machine.
    @Test
    void positionNoReplicaReaches_isWaitedForOncePerUnitOfWork_andNotAgainWhileReplayIsStalled() throws SQLException {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory gated = emf(
                cluster, Map.of(RoutingSettings.LSN_WAIT, WAIT_MILLIS + "ms", RoutingSettings.METER_REGISTRY, meters));
        try (gated) {
            pauseAllStandbys();
            onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
            final ConsistencyToken position = ReadYourWrites.currentPosition(gated);

            final long[] first = threeStatements(gated, position);
            assertThat(gateOutcomes(meters))
                    .as(
                            "the first unit of work waits once, and times out (statements took %s ms)",
                            Arrays.toString(first))
                    .containsEntry("timed-out", 1L)
                    .containsEntry("stalled", 0L)
                    .containsEntry("waited", 0L)
                    .containsEntry("checked", 0L);
            assertThat(first[0])
                    .as("the first statement waited the whole wait: %s", Arrays.toString(first))
                    .isGreaterThanOrEqualTo(WAIT_MILLIS);

            final long[] second = threeStatements(gated, position);
            assertThat(gateOutcomes(meters))
                    .as(
                            "a second unit of work for a position no replica moves towards does not wait"
                                    + " (statements took %s ms)",
                            Arrays.toString(second))
                    .containsEntry("timed-out", 1L)
                    .containsEntry("stalled", 1L)
                    .containsEntry("waited", 0L);

            cluster.resumeAll();
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            // The gate notices replay moving again within one wait, or at the next health check: wait for it.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            int units = 0;
            while (true) {
                units++;
                try (RoutingScope ignored =
                                RoutingScope.builder().minimum(position).open();
                        EntityManager em = gated.createEntityManager()) {
                    if (!servedBy(cluster, em).isPrimary()) {
                        break;
                    }
                }
                assertThat(System.nanoTime())
                        .as(
                                "replay resumed: a replica serves the position again within 30 s (%d units of work;"
                                        + " gate %s; nodes %s)",
                                units,
                                gateOutcomes(meters),
                                RoutingStatus.of(gated).nodes())
                        .isLessThan(deadline);
                pauseBriefly();
            }
            System.out.printf("replay resumed: a replica served the position at unit of work %d%n", units);
        }
    }

    private static void pauseBriefly() {
        try {
            Thread.sleep(20); // the poll interval of the bounded wait above
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
