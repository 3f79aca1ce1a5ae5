package io.github.hibernaterouting.it;

import static io.github.hibernaterouting.it.ItSupport.emf;
import static io.github.hibernaterouting.it.ItSupport.nodesServing;
import static io.github.hibernaterouting.it.ItSupport.pause;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A switchover as CloudNativePG or Patroni makes one: the primary stops, a standby is promoted, the
 * application's primary URL reaches the promoted server, and the other standby is re-pointed to it.
 * The standby still on the old timeline gets no reads from the first check on; once it streams the
 * new primary's timeline it serves again, within a few health checks, not after its next restartpoint
 * (up to {@code checkpoint_timeout} later). The new primary's last checkpoint still names the old
 * timeline for a while after the promotion (its first checkpoint after it is spread over
 * {@code checkpoint_completion_target}), and so does the other standby's last restartpoint: neither
 * tells where they are now. A dedicated cluster: promotion is for good.
 */
@ExtendWith(RoutingLeakCheck.class)
class SwitchoverIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    static PostgresCluster cluster;

    @BeforeAll
    static void startCluster() throws SQLException {
        cluster = PostgresCluster.builder().standbys(2).start();
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement()) {
            s.execute("create table switched_rows (id bigserial primary key, text text)");
            s.execute("grant all on switched_rows, switched_rows_id_seq to " + cluster.user());
            // The role may see its standbys' WAL receivers (pg_monitor includes this).
            s.execute("grant pg_read_all_stats to " + cluster.user());
            s.execute("insert into switched_rows (text) values ('before')");
        }
        cluster.awaitCaughtUp(WAIT);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void afterASwitchover_theStandbyOnTheOldTimelineGetsNoReads_andServesAgainOnceItFollowsTheNewPrimary()
            throws SQLException {
        final Node promoted = cluster.standby(1);
        final Node other = cluster.standby(2);
        cluster.stop(cluster.primary());
        cluster.promote(promoted);
        try (Connection c = cluster.connect(promoted);
                Statement s = c.createStatement()) {
            s.execute("insert into switched_rows (text) values ('after')");
        }

        final Map<String, Object> settings = new HashMap<>();
        settings.put("jakarta.persistence.jdbc.url", promoted.jdbcUrl());
        settings.put(RoutingSettings.REPLICA_URLS, other.jdbcUrl());
        settings.put(RoutingSettings.MAX_REPLICA_LAG, "1h");
        final EntityManagerFactory emf = emf(cluster, settings);
        try (emf) {
            final RoutingStatus.Node replica = RoutingStatus.of(emf).nodes().get(1);
            assertThat(replica.problem())
                    .as("the standby on the old timeline, refused from the first check (%s)", routingState(emf))
                    .contains("timeline 1")
                    .contains("timeline 2");
            assertThat(nodesServing(cluster, emf, 10))
                    .as("reads go to the new primary only (%s)", routingState(emf))
                    .containsExactly(promoted);

            cluster.follow(other, promoted);
            awaitTrue(
                    () -> nodesServing(cluster, emf, 4).contains(other),
                    "the re-pointed standby serves again once it streams the new timeline (" + routingState(emf) + ")");
            assertThat(RoutingStatus.of(emf).nodes().get(1).problem()).isNull();
            try (EntityManager em = emf.createEntityManager()) {
                em.getTransaction().begin();
                em.createNativeQuery("insert into switched_rows (text) values ('through the library')")
                        .executeUpdate();
                assertThat(servedBy(cluster, em))
                        .as("writes, on the new primary")
                        .isEqualTo(promoted);
                em.getTransaction().commit();
            }
        }
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within 30 s").isLessThan(deadline);
            pause(20); // the poll interval
        }
    }
}
