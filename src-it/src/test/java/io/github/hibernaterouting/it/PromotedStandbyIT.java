package io.github.hibernaterouting.it;

import static io.github.hibernaterouting.it.ItSupport.emf;
import static io.github.hibernaterouting.it.ItSupport.nodesServing;
import static io.github.hibernaterouting.it.ItSupport.pause;
import static io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A standby promoted behind the application's back (as a failover manager would, or by mistake) is
 * a writable server with its own timeline: it must get no more reads. A dedicated cluster without
 * the JUnit extension, because promotion breaks replication for good and the extension's healing
 * (resume replay, await catch-up) cannot apply to a server that is no longer in recovery.
 */
@ExtendWith(RoutingLeakCheck.class)
class PromotedStandbyIT {
    static PostgresCluster cluster;

    @BeforeAll
    static void startCluster() throws SQLException {
        cluster = PostgresCluster.builder().standbys(2).start();
        onPrimary(cluster, "create table promoted_rows (id bigserial primary key, text text)");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static long count(Node node, String text) throws SQLException {
        try (Connection c = cluster.connect(node);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("select count(*) from promoted_rows where text = '" + text + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void promotedStandby_getsNoReadsAfterTheNextHealthCheck_evenFromAUnitOfWorkThatReadThere_andWritesStayOnThePrimary()
            throws SQLException {
        final Node promoted = cluster.standby(2);
        final Node standby = cluster.standby(1);
        final Logger monitorLog =
                (Logger) LoggerFactory.getLogger("io.github.hibernaterouting.routing.internal.replicas.ReplicaMonitor");
        final ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        monitorLog.addAppender(logged);
        final EntityManagerFactory emf = emf(cluster, Map.of());
        EntityManager stickyOnPromoted = null;
        try (emf) {
            awaitReplicasUp(emf);
            assertThat(nodesServing(cluster, emf, 10))
                    .as("before: both standbys serve reads; %s", routingState(emf))
                    .contains(standby, promoted);
            for (int attempt = 0; attempt < 10 && stickyOnPromoted == null; attempt++) {
                final EntityManager em = emf.createEntityManager();
                if (servedBy(cluster, em).equals(promoted)) {
                    stickyOnPromoted = em;
                } else {
                    em.close();
                }
            }
            assertThat(stickyOnPromoted)
                    .as("a unit of work that read from the standby to be promoted; %s", routingState(emf))
                    .isNotNull();

            try (Connection admin = cluster.adminConnection(promoted);
                    Statement s = admin.createStatement();
                    ResultSet rs = s.executeQuery("select pg_promote()")) {
                rs.next();
                assertThat(rs.getBoolean(1)).as("promotion finished").isTrue();
            }
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (List.copyOf(logged.list).stream()
                    .noneMatch(e -> e.getFormattedMessage().contains("replica2")
                            && e.getFormattedMessage().contains("not in recovery"))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the health check did not report the promoted standby within 30 s; "
                            + routingState(emf) + "; the monitor logged "
                            + List.copyOf(logged.list).stream()
                                    .map(ILoggingEvent::getFormattedMessage)
                                    .toList());
                }
                pause(20);
            }

            assertThat(servedBy(cluster, stickyOnPromoted))
                    .as("the unit of work that read there moves to the primary; %s", routingState(emf))
                    .isEqualTo(cluster.primary());
            assertThat(nodesServing(cluster, emf, 20))
                    .as("new units of work read from the remaining standby only; %s", routingState(emf))
                    .containsExactly(standby);

            final String text = "after promotion";
            try (RoutingScope ignored =
                            RoutingScope.builder().actor("promotion-actor").open();
                    EntityManager em = emf.createEntityManager()) {
                em.getTransaction().begin();
                em.createNativeQuery("insert into promoted_rows (text) values (?)")
                        .setParameter(1, text)
                        .executeUpdate();
                em.getTransaction().commit();
            }
            assertThat(count(cluster.primary(), text))
                    .as("the write is on the configured primary")
                    .isEqualTo(1);
            assertThat(count(promoted, text)).as("not on the promoted standby").isZero();
            try (RoutingScope ignored =
                            RoutingScope.builder().actor("promotion-actor").open();
                    EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em))
                        .as("the actor's read after its write")
                        .isNotEqualTo(promoted);
            }
        } finally {
            if (stickyOnPromoted != null && stickyOnPromoted.isOpen()) {
                stickyOnPromoted.close();
            }
            monitorLog.detachAppender(logged);
        }
    }
}
