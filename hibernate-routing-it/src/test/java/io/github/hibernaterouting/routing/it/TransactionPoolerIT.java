package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PgBouncer;
import io.github.hibernaterouting.testkit.PgBouncer.PoolMode;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.TcpBalancer;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replica URL that reaches the standbys through a real PgBouncer in front of a real HAProxy that
 * balances its server connections round-robin over both standbys. In session mode a client connection
 * keeps one server connection, so the library's check of each connection holds and the standbys serve.
 * In transaction mode each transaction may run on another standby than the one the connection was
 * checked on, and no client can see the pooler's mode: the library must notice the pooler and refuse
 * the replica, naming the pool mode and the setting that says it is a session-mode pooler, instead of
 * serving reads from a standby it never checked (before, it served them).
 */
@ExtendWith(RoutingLeakCheck.class)
class TransactionPoolerIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    static PostgresCluster cluster;
    static TcpBalancer balancer;

    @BeforeAll
    static void start() throws SQLException {
        final boolean tools = PgBouncer.available() && TcpBalancer.available();
        if ("true".equals(System.getenv("CI"))) {
            assertThat(tools)
                    .as("CI needs pgbouncer and haproxy (Debian packages; .ci/run installs them)")
                    .isTrue();
        }
        assumeTrue(tools, "pgbouncer and haproxy are not on the PATH");
        cluster = DB.cluster();
        createSchema(cluster);
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        balancer = TcpBalancer.start(cluster.standbys());
    }

    @AfterAll
    static void stop() {
        if (balancer != null) {
            balancer.close();
        }
    }

    private static EntityManagerFactory through(PgBouncer bouncer, boolean sessionPoolerSaid) {
        return emf(
                cluster,
                Map.of(
                        RoutingSettings.REPLICA_URLS,
                        bouncer.jdbcUrl(),
                        RoutingSettings.REPLICA_SESSION_POOLER,
                        Boolean.toString(sessionPoolerSaid)));
    }

    private static long count(EntityManager em) {
        return em.createQuery("select count(n) from Note n", Long.class).getSingleResult();
    }

    @Test
    void replicaBehindATransactionModePooler_isRefusedNamingThePoolMode_andReadsSeeEveryCommit() throws SQLException {
        try (PgBouncer bouncer = PgBouncer.start(PoolMode.TRANSACTION, balancer.port(), cluster, 4);
                EntityManagerFactory emf = through(bouncer, false)) {
            try (EntityManager em = emf.createEntityManager()) {
                count(em);
            }
            final RoutingStatus.Node replica = RoutingStatus.of(emf).nodes().get(1);
            assertThat(replica.problem())
                    .as("the replica behind the pooler (%s)", routingState(emf))
                    .isNotNull()
                    .contains("pool_mode=transaction")
                    .contains(RoutingSettings.REPLICA_SESSION_POOLER);
            cluster.pauseReplay(cluster.standby(1));
            onPrimary(cluster, "insert into note values (nextval('note_seq'), 'standby1 has not replayed this')");
            final long expected = countOnPrimary(cluster, "note");
            // Enough reads, over several health-check intervals, that one of them takes the turn to try another
            // connection of the refused replica (a server behind a URL the health check did not reach).
            for (int i = 0; i < 30; i++) {
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(count(em)).as("read #%d sees every commit", i).isEqualTo(expected);
                    assertThat(servedBy(cluster, em))
                            .as("read #%d: the primary, not a standby behind the pooler (%s)", i, routingState(emf))
                            .isEqualTo(cluster.primary());
                }
            }
        }
    }

    /** A session-mode pooler looks the same from the client: refused until the setting says what it is. */
    @Test
    void replicaBehindASessionModePooler_isRefusedUntilTheSettingSaysSo() {
        try (PgBouncer bouncer = PgBouncer.start(PoolMode.SESSION, balancer.port(), cluster, 4);
                EntityManagerFactory emf = through(bouncer, false)) {
            try (EntityManager em = emf.createEntityManager()) {
                count(em);
                assertThat(servedBy(cluster, em)).as(routingState(emf)).isEqualTo(cluster.primary());
            }
            assertThat(RoutingStatus.of(emf).nodes().get(1).problem())
                    .as(routingState(emf))
                    .contains(RoutingSettings.REPLICA_SESSION_POOLER + "=true");
        }
    }

    @Test
    void replicaBehindASessionModePooler_servesReads_whenTheSettingSaysSo() {
        try (PgBouncer bouncer = PgBouncer.start(PoolMode.SESSION, balancer.port(), cluster, 4);
                EntityManagerFactory emf = through(bouncer, true)) {
            final Set<Node> served = new HashSet<>();
            for (int i = 0; i < 6; i++) {
                try (EntityManager em = emf.createEntityManager()) {
                    count(em);
                    served.add(servedBy(cluster, em));
                }
            }
            assertThat(served)
                    .as("standbys behind a session-mode pooler serve (%s)", routingState(emf))
                    .isNotEmpty()
                    .doesNotContain(cluster.primary());
            assertThat(RoutingStatus.of(emf).nodes().get(1).problem())
                    .as("no refusal (%s)", routingState(emf))
                    .isNull();
        }
    }
}
