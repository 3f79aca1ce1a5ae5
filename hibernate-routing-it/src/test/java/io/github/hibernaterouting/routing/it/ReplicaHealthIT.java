package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.LagBounds;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.TcpRelay;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Health and lag come from connections the application cannot exhaust: a replica whose pool is
 * busy with long queries is not declared down (its reads fall back, its breaker stays closed, its
 * connections stay); a saturated primary pool does not freeze lag data; and a replica whose lag
 * data is older than the bound gets no reads.
 */
@ExtendWith(RoutingLeakCheck.class)
class ReplicaHealthIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    /** One replica (standby 1) with a pool of two connections that a caller waits 250 ms for. */
    private static EntityManagerFactory smallReplicaPool(String policy, SimpleMeterRegistry meters) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.REPLICA_URLS, cluster.standby(1).jdbcUrl());
        settings.put(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "2");
        settings.put(RoutingSettings.REPLICA_CONNECTION_TIMEOUT, "250ms");
        settings.put(RoutingSettings.REPLICA_FAILURE, policy);
        settings.put(RoutingSettings.METER_REGISTRY, meters);
        return emf(cluster, settings);
    }

    /** A report's query: a minute, far longer than a test needs the pool busy; {@link #endReports} cancels it. */
    private static final String REPORT = "select pg_sleep(60)";

    /**
     * Runs {@code count} report queries on the replica at once; returns when they all hold a connection. They
     * hold it until {@link #endReports} cancels them, so the pool stays busy for as long as the test needs,
     * however slow this machine is.
     */
    private static List<Future<?>> longReports(EntityManagerFactory factory, ExecutorService threads, int count) {
        final List<Future<?>> reports = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            reports.add(threads.submit(() -> {
                try (EntityManager em = factory.createEntityManager()) {
                    em.createNativeQuery(REPORT).getSingleResult();
                }
            }));
        }
        awaitTrue(() -> runningReports() == count, "the reports run on standby 1, a pool connection each");
        return reports;
    }

    /**
     * Cancels the reports ({@code pg_cancel_backend} on standby 1: the query fails with SQLSTATE 57014, its
     * connection stays good) and waits until each has ended so, having given its connection back. A report
     * whose query has not reached the server yet is cancelled at a later round.
     */
    private static void endReports(List<Future<?>> reports) throws Exception {
        awaitTrue(
                () -> {
                    cancelRunningReports();
                    return reports.stream().allMatch(Future::isDone);
                },
                "the cancelled reports end");
        for (Future<?> report : reports) {
            assertThatThrownBy(report::get)
                    .as("a cancelled report")
                    .isInstanceOf(ExecutionException.class)
                    .hasStackTraceContaining("canceling statement due to user request");
        }
    }

    private static void cancelRunningReports() {
        try (Connection admin = cluster.adminConnection(cluster.standby(1));
                Statement s = admin.createStatement()) {
            s.execute("select pg_cancel_backend(pid) from pg_stat_activity where query = '" + REPORT
                    + "' and pid <> pg_backend_pid()");
        } catch (SQLException e) {
            throw new AssertionError("cannot cancel the reports on standby 1", e);
        }
    }

    private static RoutingStatus.Pool replicaPool(EntityManagerFactory factory) {
        return RoutingStatus.of(factory).nodes().get(1).pool();
    }

    @Test
    void replicaWhosePoolIsBusy_isNotDeclaredDown_itsReadsFallBack_andItsConnectionsStay() throws Exception {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory busy = smallReplicaPool("FALLBACK", meters);
        final ExecutorService threads = Executors.newFixedThreadPool(2);
        try (busy) {
            final ReplicaNode node = runtime(busy).replicas().get(0);
            final List<Future<?>> reports = longReports(busy, threads, 2);

            runtime(busy).checkReplicasNow();
            assertThat(node.isUp())
                    .as("the health check does not need the busy pool")
                    .isTrue();

            try (EntityManager em = busy.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("no replica connection within 250 ms: the primary (%s)", routingState(busy))
                        .isTrue();
            }
            assertThat(node.breaker().isClosed())
                    .as("a busy pool does not open the breaker")
                    .isTrue();
            assertThat(node.isUp()).isTrue();
            assertThat(meters.find(RoutingMetrics.REPLICA_FAILURES).counter())
                    .as("a busy pool is not a replica failure")
                    .isNull();
            assertThat(meters.get(RoutingMetrics.FALLBACKS)
                            .tag("reason", "replica-busy")
                            .counter()
                            .count())
                    .isEqualTo(1);

            endReports(reports);
            final RoutingStatus.Pool pool = replicaPool(busy);
            assertThat(pool.active() + pool.idle())
                    .as("the reports' connections went back to the pool, not evicted")
                    .isEqualTo(2);
            try (EntityManager em = busy.createEntityManager()) {
                assertThat(servedBy(cluster, em))
                        .as("the pool has connections again (%s)", routingState(busy))
                        .isEqualTo(cluster.standby(1));
            }
        } finally {
            cancelRunningReports();
            threads.shutdownNow();
        }
    }

    @Test
    void replicaWhosePoolIsBusy_failsTheRead_underFail_withoutOpeningTheBreaker() throws Exception {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final EntityManagerFactory busy = smallReplicaPool("FAIL", meters);
        final ExecutorService threads = Executors.newFixedThreadPool(2);
        try (busy) {
            final ReplicaNode node = runtime(busy).replicas().get(0);
            final List<Future<?>> reports = longReports(busy, threads, 2);
            try (EntityManager em = busy.createEntityManager()) {
                assertThatThrownBy(() -> servedBy(cluster, em))
                        .hasStackTraceContaining("replica1")
                        .hasStackTraceContaining("busy")
                        .hasStackTraceContaining(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE);
            }
            runtime(busy).checkReplicasNow();
            assertThat(node.breaker().isClosed()).isTrue();
            assertThat(node.isUp()).isTrue();
            endReports(reports);
        } finally {
            cancelRunningReports();
            threads.shutdownNow();
        }
    }

    /** A pool as a container, JNDI or a wrapper shows it: a {@code DataSource} that does not unwrap to HikariCP. */
    private record OpaquePool(javax.sql.DataSource pool) implements javax.sql.DataSource {
        @Override
        public Connection getConnection() throws SQLException {
            return pool.getConnection();
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return pool.getConnection(user, password);
        }

        @Override
        public java.io.PrintWriter getLogWriter() throws SQLException {
            return pool.getLogWriter();
        }

        @Override
        public void setLogWriter(java.io.PrintWriter out) throws SQLException {
            pool.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            pool.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return pool.getLoginTimeout();
        }

        @Override
        public java.util.logging.Logger getParentLogger() {
            return java.util.logging.Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }
    }

    private static int runningReports() {
        try (Connection admin = cluster.adminConnection(cluster.standby(1));
                Statement s = admin.createStatement();
                java.sql.ResultSet rs = s.executeQuery(
                        "select count(*) from pg_stat_activity where query = '" + REPORT + "' and state = 'active'")) {
            rs.next();
            return rs.getInt(1);
        } catch (SQLException e) {
            throw new AssertionError("cannot count the reports on standby 1", e);
        }
    }

    // Busy was failed for every pool but a bare HikariCP: an exhausted container or wrapped pool opened the
    // breaker and took the replica out for the breaker's open duration.
    @Test
    void exhaustedReplicaPoolThatIsNotHikari_isBusyNotFailed_itsReadsFallBack_andItsBreakerStaysClosed()
            throws Exception {
        final com.zaxxer.hikari.HikariDataSource hidden = new com.zaxxer.hikari.HikariDataSource();
        hidden.setJdbcUrl(cluster.standby(1).jdbcUrl());
        hidden.setUsername(cluster.user());
        hidden.setPassword(cluster.password());
        hidden.setMaximumPoolSize(3);
        hidden.setConnectionTimeout(250);
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.REPLICA_URLS, null);
        settings.put(RoutingSettings.REPLICA_DATASOURCES, List.of(new OpaquePool(hidden)));
        settings.put(RoutingSettings.METER_REGISTRY, meters);
        final ExecutorService threads = Executors.newFixedThreadPool(2);
        final EntityManagerFactory opaque = emf(cluster, settings);
        try (hidden;
                opaque) {
            RoutingTestSupport.awaitReplicasUp(opaque);
            final ReplicaNode node = runtime(opaque).replicas().get(0);
            // The library's health check keeps one connection of such a pool; two reports hold the others.
            final List<Future<?>> reports = longReports(opaque, threads, 2);
            awaitTrue(() -> hidden.getHikariPoolMXBean().getActiveConnections() == 3, "the pool is exhausted");

            try (EntityManager em = opaque.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("no replica connection within 250 ms: the primary (%s)", routingState(opaque))
                        .isTrue();
            }
            assertThat(meters.get(RoutingMetrics.FALLBACKS)
                            .tag("reason", "replica-busy")
                            .counter()
                            .count())
                    .as("the fallback's reason")
                    .isEqualTo(1);
            assertThat(meters.find(RoutingMetrics.REPLICA_FAILURES).counter())
                    .as("an exhausted pool is not a replica failure")
                    .isNull();
            assertThat(node.breaker().isClosed()).as("the breaker").isTrue();
            endReports(reports);
            try (EntityManager em = opaque.createEntityManager()) {
                assertThat(servedBy(cluster, em))
                        .as("the replica serves once the reports end (%s)", routingState(opaque))
                        .isEqualTo(cluster.standby(1));
            }
        } finally {
            cancelRunningReports();
            threads.shutdownNow();
        }
    }

    @Test
    void saturatedPrimaryPool_doesNotFreezeLagData_aPausedStandbyGoesOverTheBoundInTime() throws Exception {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "2");
        settings.put(RoutingSettings.MAX_REPLICA_LAG_BYTES, "64kB");
        final EntityManagerFactory bounded = emf(cluster, settings);
        final List<EntityManager> holders = new ArrayList<>();
        try (bounded) {
            try {
                for (int i = 0; i < 2; i++) {
                    final EntityManager em = bounded.createEntityManager();
                    holders.add(em);
                    em.setProperty(RoutingSettings.STRATEGY, Strategy.PRIMARY.name());
                    em.getTransaction().begin();
                    assertThat(servedBy(cluster, em).isPrimary()).isTrue();
                }
                assertThat(RoutingStatus.of(bounded).nodes().get(0).pool().active())
                        .as("the application holds every primary connection")
                        .isEqualTo(2);

                cluster.pauseReplay(cluster.standby(1));
                onPrimary(
                        cluster,
                        "insert into note select nextval('note_seq'), repeat('x', 1000) from generate_series(1, 2000)");
                final ReplicaNode paused = runtime(bounded).replicas().get(0);
                // Health checks every 100 ms: a few of them, not the primary pool's 30 s timeout.
                awaitTrue(
                        () -> paused.lagBytes() > 64 * 1024, "the paused standby's lag is seen while the pool is full");
                cluster.awaitReplay(cluster.standby(2), cluster.currentWalLsn(), Duration.ofSeconds(30));
                // And the library has seen it: a check taken while standby 2 was still replaying the insert
                // found it over the bound too, and then every read would wait for the full primary pool.
                final ReplicaNode replaying = runtime(bounded).replicas().get(1);
                awaitTrue(
                        () -> replaying.lagBytes() >= 0 && replaying.lagBytes() <= 64 * 1024,
                        "standby 2's lag is seen back within the bound while the pool is full");
                assertThat(servedByFreshSessions(bounded, 6))
                        .as("only standby 2 is within the bound (%s)", routingState(bounded))
                        .containsExactly(cluster.standby(2));
            } finally {
                for (EntityManager em : holders) {
                    em.getTransaction().rollback();
                    em.close();
                }
            }
        }
    }

    /** Runs {@code sql} on the primary as superuser (roles, their limits, other sessions). */
    private static void asAdmin(String sql) throws SQLException {
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement()) {
            s.execute(sql);
        }
    }

    /** The application name of the library's own health-check connections. */
    private static final String PROBE = "hibernate-routing health check";

    /**
     * Creates login role {@code role} with {@code password} on the primary (the standbys replay it), with
     * what the library needs (the identity functions) and the tests' tables; replicas keep the cluster's role.
     */
    private static void createRole(String role, String password) throws SQLException {
        asAdmin("create role " + role + " login password '" + password + "'; grant all on account, note to " + role
                + "; grant all on sequence account_seq, note_seq to " + role + "; "
                + io.github.hibernaterouting.routing.internal.consistency.WalPositions.identityGrants(role));
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    /** The primary backends of {@code role}: the pool's ({@code probe} false) or the health check's. */
    private static List<Integer> primaryBackends(String role, boolean probe) {
        final List<Integer> pids = new ArrayList<>();
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement();
                java.sql.ResultSet rs = s.executeQuery("select pid from pg_stat_activity where usename = '" + role
                        + "' and (application_name = '" + PROBE + "') = " + probe + " order by pid")) {
            while (rs.next()) {
                pids.add(rs.getInt(1));
            }
        } catch (SQLException e) {
            throw new AssertionError("cannot list the backends of " + role, e);
        }
        return pids;
    }

    /** Ends the health check's connection of {@code role} to the primary, as an administrator could. */
    private static void terminateProbe(String role) throws SQLException {
        asAdmin("select pg_terminate_backend(pid) from pg_stat_activity where usename = '" + role
                + "' and application_name = '" + PROBE + "'");
    }

    private static Map<String, Object> asRole(String role, String password) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("jakarta.persistence.jdbc.user", role);
        settings.put("jakarta.persistence.jdbc.password", password);
        settings.put(RoutingSettings.REPLICA_USER, cluster.user());
        settings.put(RoutingSettings.REPLICA_PASSWORD, cluster.password());
        return settings;
    }

    /** The bounds of the persistence unit below: 64 kB, 1 s, lag data no older than 1 s. */
    private static final LagBounds LIMITED_BOUNDS =
            new LagBounds(true, 64 * 1024, 1000, LagBounds.staleAfter(1000, 100));

    // Seen in a black-box run: the role at its connection limit and the probe's session ended once; reads went
    // to a standby megabytes behind while the status said 0 bytes, and every failed check emptied the pool.
    @Test
    void primaryProbeThatCannotConnect_whileThePoolWorks_makesReplicaLagUnknown_notZero_andLeavesThePoolAlone()
            throws Exception {
        createRole("limited_app", "limited-secret");
        final Map<String, Object> settings = asRole("limited_app", "limited-secret");
        settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "2");
        settings.put(RoutingSettings.PRIMARY_MINIMUM_IDLE, "2");
        settings.put(RoutingSettings.MAX_REPLICA_LAG_BYTES, "64kB");
        settings.put(RoutingSettings.MAX_REPLICA_LAG, "1s");
        final EntityManagerFactory limited = emf(cluster, settings);
        try (limited) {
            awaitTrue(() -> primaryBackends("limited_app", false).size() == 2, "the primary pool holds 2 connections");
            assertThat(primaryBackends("limited_app", true))
                    .as("the health check's connection")
                    .hasSize(1);
            final List<Integer> poolBackends = primaryBackends("limited_app", false);
            asAdmin("alter role limited_app connection limit 2");
            terminateProbe("limited_app");
            awaitTrue(() -> primaryBackends("limited_app", true).isEmpty(), "the health check's connection is gone");

            cluster.pauseReplay(cluster.standby(1));
            onPrimary(
                    cluster,
                    "insert into note select nextval('note_seq'), repeat('x', 1000) from generate_series(1, 300)");
            final ReplicaNode paused = runtime(limited).replicas().get(0);
            // Once the last primary reading is older than the bound (1 s), lag is unknown for every replica.
            awaitTrue(
                    () -> paused.ineligibility(LIMITED_BOUNDS, Lsn.UNKNOWN) == ReplicaNode.Ineligibility.LAG_UNKNOWN,
                    "the paused standby's lag counts as unknown while the primary cannot be read ("
                            + routingState(limited) + ")");
            assertThat(servedByFreshSessions(limited, 8))
                    .as("no replica serves with unknown lag (%s)", routingState(limited))
                    .containsExactly(cluster.primary());
            // The status shows it from the standby's next check on (the refusal above may come first).
            awaitTrue(
                    () -> RoutingStatus.of(limited).nodes().get(1).lagBytes() == -1,
                    "the paused standby's lag in the status: unknown, not 0 against a frozen reading ("
                            + routingState(limited) + ")");
            try (EntityManager em = limited.createEntityManager()) {
                em.getTransaction().begin();
                em.persist(new Note("written while the probe is refused"));
                em.getTransaction().commit();
            }
            assertThat(primaryBackends("limited_app", false))
                    .as("the pool's connections: the same backends, none closed because the probe failed")
                    .isEqualTo(poolBackends);

            asAdmin("alter role limited_app connection limit -1");
            cluster.resumeReplay(cluster.standby(1));
            awaitTrue(
                    () -> servedByFreshSessions(limited, 6).stream().noneMatch(Node::isPrimary),
                    "replicas serve again once the probe reconnects (" + routingState(limited) + ")");
        } finally {
            asAdmin("alter role limited_app connection limit -1");
            cluster.resumeAll();
        }
    }

    // Seen in a black-box run: the primary's health check refused (the role at its connection limit, its session
    // ended) while the pool worked; a standby paused megabytes behind served reads in fresh EntityManagers, its lag
    // measured against the last primary reading from before the failure, for as long as that reading counted as
    // recent (here an hour: the time bound is one no test reaches). Behind one URL that reaches both standbys, each
    // connection is admitted by its own server's lag, which must count as unknown alike.
    @ParameterizedTest(name = "both standbys behind one URL: {0}")
    @ValueSource(booleans = {false, true})
    void primaryProbeThatFails_makesReplicaLagUnknownAtOnce_notMeasuredAgainstTheReadingFromBeforeTheFailure(
            boolean behindOneUrl) throws Exception {
        final String role = behindOneUrl ? "refused_relayed_app" : "refused_app";
        createRole(role, "refused-secret");
        final Map<String, Object> settings = asRole(role, "refused-secret");
        settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "2");
        settings.put(RoutingSettings.PRIMARY_MINIMUM_IDLE, "2");
        settings.put(RoutingSettings.MAX_REPLICA_LAG_BYTES, "64kB");
        settings.put(RoutingSettings.MAX_REPLICA_LAG, RoutingItSupport.LAG_BOUND_NO_TEST_REACHES);
        final TcpRelay relay = behindOneUrl ? new TcpRelay(cluster.standbys(), cluster.database()) : null;
        if (relay != null) {
            settings.put(RoutingSettings.REPLICA_URLS, relay.jdbcUrl());
        }
        final EntityManagerFactory refused = emf(cluster, settings);
        try (relay;
                refused) {
            if (relay != null) {
                awaitTrue(
                        () -> {
                            // Two units of work at once: the relay hands their two connections to the two standbys.
                            try (EntityManager first = refused.createEntityManager();
                                    EntityManager second = refused.createEntityManager()) {
                                first.getTransaction().begin();
                                second.getTransaction().begin();
                                servedBy(cluster, first);
                                servedBy(cluster, second);
                                first.getTransaction().commit();
                                second.getTransaction().commit();
                            }
                            return runtime(refused).replicas().get(0).severalServers();
                        },
                        "the relay's connections reach both standbys (" + routingState(refused) + ")");
            }
            awaitTrue(() -> primaryBackends(role, false).size() == 2, "the primary pool holds 2 connections");
            awaitTrue(() -> primaryBackends(role, true).size() == 1, "the health check is connected");
            asAdmin("alter role " + role + " connection limit 2");
            terminateProbe(role);
            awaitTrue(() -> primaryBackends(role, true).isEmpty(), "the health check's connection is gone");
            // A check of the primary that fails for certain: its connection is gone and a new one is refused.
            runtime(refused).checkReplicasNow();

            cluster.pauseReplay(cluster.standby(1));
            onPrimary(
                    cluster,
                    "insert into note select nextval('note_seq'), repeat('x', 1000) from generate_series(1, 300)");
            runtime(refused).checkReplicasNow();
            assertThat(servedByFreshSessions(refused, 8))
                    .as(
                            "no replica serves while the primary's position is unknown; standby 1 is paused %s bytes"
                                    + " behind (%s)",
                            cluster.currentWalLsn().asLong()
                                    - cluster.replayLsn(cluster.standby(1)).asLong(),
                            routingState(refused))
                    .containsExactly(cluster.primary());
            assertThat(RoutingStatus.of(refused).nodes().get(1).servers())
                    .as("each server's lag in the status: unknown (%s)", routingState(refused))
                    .allMatch(server -> server.lagBytes() == -1);

            asAdmin("alter role " + role + " connection limit -1");
            cluster.resumeReplay(cluster.standby(1));
            awaitTrue(
                    () -> servedByFreshSessions(refused, 6).stream().noneMatch(Node::isPrimary),
                    "replicas serve again once the probe reconnects (" + routingState(refused) + ")");
        } finally {
            asAdmin("alter role " + role + " connection limit -1");
            cluster.resumeAll();
        }
    }

    @Test
    void primaryProbe_reconnectsWithThePoolsCurrentPassword_afterTheCredentialsRotate() throws Exception {
        createRole("rotated_app", "first-secret");
        final com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource();
        pool.setJdbcUrl(cluster.primary().jdbcUrl());
        pool.setUsername("rotated_app");
        pool.setPassword("first-secret");
        pool.setMaximumPoolSize(2);
        final Map<String, Object> settings = asRole("rotated_app", "first-secret");
        settings.put("jakarta.persistence.jdbc.url", null);
        settings.put("jakarta.persistence.jdbc.user", null);
        settings.put("jakarta.persistence.jdbc.password", null);
        settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, null);
        settings.put("hibernate.connection.datasource", pool);
        final EntityManagerFactory rotated = emf(cluster, settings);
        try (pool;
                rotated) {
            awaitTrue(() -> primaryBackends("rotated_app", true).size() == 1, "the health check is connected");
            asAdmin("alter role rotated_app password 'second-secret'");
            pool.getHikariConfigMXBean().setPassword("second-secret");
            terminateProbe("rotated_app");

            awaitTrue(
                    () -> primaryBackends("rotated_app", true).size() == 1,
                    "the health check connects again, with the pool's new password (" + routingState(rotated) + ")");
            try (EntityManager em = rotated.createEntityManager()) {
                em.getTransaction().begin();
                em.persist(new Note("written after the rotation"));
                em.getTransaction().commit();
            }
        }
    }

    /**
     * The age rule of the persistence unit below on its own: lag data older than its bound (1 s; never less
     * than three health-check intervals) is unknown.
     */
    private static final LagBounds AGE_RULE = new LagBounds(false, 0, 0, LagBounds.staleAfter(1000, 100));

    // When the lag data goes stale depends on when the last check that answered ran, which a starved health-check
    // thread can make any time before the block: the verdict is the library's reason (lag unknown, not down), and
    // the only time judged is a lower bound the age rule guarantees. The elapsed times are printed.
    @Test
    void replicaWhoseLagDataIsOlderThanTheBound_getsNoReads_whileTheOtherIsStillChecked() {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("hibernate.hikari.driverClassName", BlockableDriver.class.getName());
        settings.put(RoutingSettings.MAX_REPLICA_LAG, "1s");
        final EntityManagerFactory blockable = emf(cluster, settings);
        try (blockable) {
            final ReplicaNode blocked = runtime(blockable).replicas().get(0);
            assertThat(((com.zaxxer.hikari.HikariDataSource) blocked.connections()).getDriverClassName())
                    .isEqualTo(BlockableDriver.class.getName());
            assertThat(servedByFreshSessions(blockable, 6))
                    .as("both standbys serve before the block (%s)", routingState(blockable))
                    .containsExactlyInAnyOrder(cluster.standby(1), cluster.standby(2));
            // A check of standby 1 that answers after this instant: the last one that answers is no older.
            final long checkedFrom = System.nanoTime();
            runtime(blockable).checkReplicasNow();
            BlockableDriver.block(cluster.standby(1).jdbcUrl());
            final long blockedAt = System.nanoTime();
            final long deadline = blockedAt + Duration.ofSeconds(30).toNanos();
            Set<Node> served = servedByFreshSessions(blockable, 4);
            while (!served.equals(Set.of(cluster.standby(2)))) {
                assertThat(System.nanoTime())
                        .as(
                                "standby 1, whose lag is no longer known, gets no reads within 30 s (served by %s; %s)",
                                served, routingState(blockable))
                        .isLessThan(deadline);
                pause();
                served = servedByFreshSessions(blockable, 4);
            }
            final Duration sinceCheck = Duration.ofNanos(System.nanoTime() - checkedFrom);
            System.out.printf(
                    "standby 1 got no more reads %d ms after its health check was blocked, %d ms after the last"
                            + " check run by the test (the bound: 1 s)%n",
                    Duration.ofNanos(System.nanoTime() - blockedAt).toMillis(), sinceCheck.toMillis());
            assertThat(blocked.ineligibility(AGE_RULE, Lsn.UNKNOWN))
                    .as("the library judges standby 1's lag unknown (%s)", routingState(blockable))
                    .isEqualTo(ReplicaNode.Ineligibility.LAG_UNKNOWN);
            assertThat(RoutingStatus.of(blockable).nodes().get(1).up())
                    .as("standby 1 is not down: its check hangs, it has not failed (%s)", routingState(blockable))
                    .isTrue();
            assertThat(sinceCheck)
                    .as("the lag data went stale only once it was older than the bound, not at the block")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        } finally {
            BlockableDriver.unblockAll();
        }
    }

    private static void pause() {
        try {
            Thread.sleep(20); // the poll interval of the bounded wait for standby 1 to get no reads
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within 30 s").isLessThan(deadline);
            try {
                Thread.sleep(20); // the poll interval
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
