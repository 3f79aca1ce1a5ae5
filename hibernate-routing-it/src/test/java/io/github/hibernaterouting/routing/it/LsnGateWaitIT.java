package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
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

    /** A wait long enough to tell apart from a round trip on a loaded machine. */
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

    @Test
    void positionNoReplicaReaches_isWaitedForOncePerUnitOfWork_andNotAgainWhileReplayIsStalled() throws SQLException {
        final EntityManagerFactory gated = emf(cluster, Map.of(RoutingSettings.LSN_WAIT, WAIT_MILLIS + "ms"));
        try (gated) {
            pauseAllStandbys();
            onPrimary(cluster, "insert into note values (nextval('note_seq'), 'no standby has this')");
            final ConsistencyToken position = ReadYourWrites.currentPosition(gated);

            final long[] first = threeStatements(gated, position);
            assertThat(first[0])
                    .as("the first statement waits: %s", Arrays.toString(first))
                    .isGreaterThanOrEqualTo(WAIT_MILLIS);
            assertThat(first[1])
                    .as("later statements of the unit do not wait again: %s", Arrays.toString(first))
                    .isLessThan(WAIT_MILLIS / 2);
            assertThat(first[2])
                    .as("later statements of the unit do not wait again: %s", Arrays.toString(first))
                    .isLessThan(WAIT_MILLIS / 2);

            final long[] second = threeStatements(gated, position);
            assertThat(second[0])
                    .as("a second unit of work for a position no replica moves towards: %s", Arrays.toString(second))
                    .isLessThan(WAIT_MILLIS / 2);

            cluster.resumeAll();
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            try (RoutingScope ignored = RoutingScope.builder().minimum(position).open();
                    EntityManager em = gated.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("replay resumed: a replica serves the position again")
                        .isFalse();
            }
        }
    }
}
