package io.github.hibernaterouting.it;

import static io.github.hibernaterouting.it.ItSupport.emf;
import static io.github.hibernaterouting.it.ItSupport.pause;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.InvalidConsistencyTokenException;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.StampedWork;
import io.github.hibernaterouting.routing.internal.bootstrap.RoutingRuntime;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.TcpRelay;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A failover that loses WAL, as asynchronous replication allows: the standby that is promoted was
 * cut off before the primary's last writes, which the other standby did replay. The application's
 * primary URL follows the primary (a relay the test re-points, as a failover manager re-points a
 * Service). The standby left with the lost writes is on the old history: it gets no reads, so no
 * read sees a row the new primary does not have; writes resume on the new primary; a consistency
 * token of a lost write is judged the same by an instance that saw the old primary answer it and
 * by one started after the failover; a message stamped with it runs on the primary instead of
 * being delivered again until the new primary happens to pass its position; and a third standby,
 * cut off with the promoted one, serves again once it follows the new primary. A dedicated cluster:
 * promotion is for good.
 */
@ExtendWith(RoutingLeakCheck.class)
class FailoverLostWalIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    static PostgresCluster cluster;
    static TcpRelay primaryEndpoint;

    @BeforeAll
    static void startCluster() throws SQLException {
        cluster = PostgresCluster.builder().standbys(3).start();
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement()) {
            s.execute("create table failover_rows (id bigserial primary key, text text)");
            s.execute("grant all on failover_rows, failover_rows_id_seq to " + cluster.user());
            s.execute("grant pg_read_all_stats to " + cluster.user());
            s.execute("insert into failover_rows (text) values ('before')");
        }
        cluster.awaitCaughtUp(WAIT);
        primaryEndpoint = new TcpRelay(List.of(cluster.primary()), cluster.database());
    }

    @AfterAll
    static void stopCluster() {
        if (primaryEndpoint != null) {
            primaryEndpoint.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Map<String, Object> settings(Node survivor, Node follower) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("jakarta.persistence.jdbc.url", primaryEndpoint.jdbcUrl());
        settings.put(RoutingSettings.REPLICA_URLS, survivor.jdbcUrl() + "," + follower.jdbcUrl());
        settings.put(RoutingSettings.MAX_REPLICA_LAG, "1h");
        // Health checks only when the test asks (checkReplicasNow), so what each instance knows of the
        // primary is what the test made it learn.
        settings.put(RoutingSettings.HEALTH_CHECK_INTERVAL, "1h");
        return settings;
    }

    @Test
    void afterAFailoverThatLostWal_noReadSeesTheLostWrites_writesResume_andEveryInstanceJudgesTheirTokenAlike()
            throws SQLException {
        final Node survivor = cluster.standby(1);
        final Node promoted = cluster.standby(2);
        // Cut off first, so it has no WAL the promoted one lacks, and can follow it after the failover.
        final Node follower = cluster.standby(3);
        try (EntityManagerFactory before = emf(cluster, settings(survivor, follower))) {
            cluster.detach(follower);
            cluster.detach(promoted);
            final ConsistencyToken lost;
            try (EntityManager em = before.createEntityManager()) {
                em.getTransaction().begin();
                // Enough WAL that the promoted standby's own writes after the failover stay short of it.
                em.createNativeQuery("insert into failover_rows (text) select 'lost' from generate_series(1, 2000)")
                        .executeUpdate();
                em.getTransaction().commit();
            }
            lost = ReadYourWrites.currentPosition(before);
            assertThat(ReadYourWrites.checkToken(before, lost))
                    .as("before the failover, the primary has reached the token (and this instance asked it)")
                    .isEqualTo(lost);
            cluster.awaitReplay(survivor, cluster.currentWalLsn(), WAIT);

            cluster.stop(cluster.primary());
            cluster.promote(promoted);
            primaryEndpoint.repoint(List.of(promoted));
            awaitPrimaryOnTimeline(before, 2);

            assertThat(RoutingStatus.of(before).nodes().get(1).problem())
                    .as("the standby with the lost writes is refused (%s)", routingState(before))
                    .isNotNull();
            assertThat(RoutingStatus.of(before).nodes().get(2).up())
                    .as("the standby cut off with the promoted one, still on the old timeline, is refused too")
                    .isFalse();
            final List<String> divergent = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                try (EntityManager em = before.createEntityManager()) {
                    final Object[] row = (Object[]) em.createNativeQuery(
                                    "select inet_server_port(), (select count(*) from failover_rows where text = 'lost')")
                            .getSingleResult();
                    if (((Number) row[1]).longValue() != 0 || ((Number) row[0]).intValue() != promoted.port()) {
                        divergent.add("port " + row[0] + " saw " + row[1] + " lost rows");
                    }
                }
            }
            assertThat(divergent)
                    .as("reads that saw the old history (%s)", routingState(before))
                    .isEmpty();
            try (EntityManager em = before.createEntityManager()) {
                em.getTransaction().begin();
                em.createNativeQuery("insert into failover_rows (text) values ('after')")
                        .executeUpdate();
                em.getTransaction().commit();
            }
            assertThat(longOn(promoted, "select count(*) from failover_rows where text = 'after'"))
                    .as("writes resume, on the new primary")
                    .isEqualTo(1);
            assertThat(Long.compareUnsigned(
                            longOn(promoted, "select pg_current_wal_insert_lsn() - '0/0'::pg_lsn"), lost.position()))
                    .as("the new primary has not reached the lost write's position")
                    .isNegative();

            try (EntityManagerFactory after = emf(cluster, settings(survivor, follower))) {
                assertThatThrownBy(() -> ReadYourWrites.checkToken(after, lost))
                        .as("an instance started after the failover")
                        .isInstanceOf(InvalidConsistencyTokenException.class);
                assertThatThrownBy(() -> ReadYourWrites.checkToken(before, lost))
                        .as("an instance that saw the old primary answer the token judges it the same")
                        .isInstanceOf(InvalidConsistencyTokenException.class);
            }

            cluster.follow(follower, promoted);
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (!ItSupport.nodesServing(cluster, before, 4).contains(follower)) {
                assertThat(System.nanoTime())
                        .as("offload resumes on the standby that follows the new primary (%s)", routingState(before))
                        .isLessThan(deadline);
                RoutingRuntime.of(before).checkReplicasNow();
                pause(20); // the poll interval
            }
            assertThat(RoutingStatus.of(before).nodes().get(1).problem())
                    .as("the standby with the lost writes stays refused")
                    .isNotNull();

            final StampedWork work = StampedWork.builder(before)
                    .whenBehind(StampedWork.WhenBehind.RETRY)
                    .build();
            final Number servedBy = work.call(lost, 1, () -> {
                try (EntityManager em = before.createEntityManager()) {
                    return (Number)
                            em.createNativeQuery("select inet_server_port()").getSingleResult();
                }
            });
            assertThat(servedBy.intValue())
                    .as("a message stamped with a lost write runs on the new primary, not redelivered forever")
                    .isEqualTo(promoted.port());
        }
    }

    /** Runs the instance's health check until it reads the primary on {@code timeline} (its URL now reaches it). */
    private static void awaitPrimaryOnTimeline(EntityManagerFactory emf, int timeline) {
        final RoutingRuntime runtime = RoutingRuntime.of(emf);
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            runtime.checkReplicasNow();
            final String problem = RoutingStatus.of(emf).nodes().get(1).problem();
            if (problem != null && problem.contains("the primary on timeline " + timeline)) {
                return;
            }
            assertThat(System.nanoTime())
                    .as("the primary read on timeline %d within 30 s (%s)", timeline, routingState(emf))
                    .isLessThan(deadline);
            pause(20); // the poll interval
        }
    }

    private static long longOn(Node node, String sql) throws SQLException {
        try (Connection c = cluster.connect(node);
                Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
