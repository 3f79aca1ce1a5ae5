package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.routing.it.RoutingItSupport.createSchema;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.emf;
import static io.github.hibernaterouting.routing.it.RoutingItSupport.runtime;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.StampedWork;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.TcpRelay;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * One replica URL that reaches both standbys: a round-robin TCP relay (as a CloudNativePG {@code -ro}
 * Service, an HAProxy port or a Kubernetes Service is), and a pgjdbc multi-host URL with
 * {@code loadBalanceHosts=true}. The library's health check holds one connection to one of the
 * standbys; the pool's connections reach both. With replay paused on one standby at a time (each in
 * turn, so whichever the health check holds), the actor's reads, a consistency token, the lag bound
 * and monotonic reads within a unit of work all hold: every read is decided against the server its
 * connection reached.
 */
@ExtendWith(RoutingLeakCheck.class)
class LoadBalancedReplicasIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    private static final int ROUNDS = 24;
    private static final String MULTI_HOST = "multi-host URL";
    private static final List<HikariDataSource> SUPPLIED_POOLS = new CopyOnWriteArrayList<>();

    static PostgresCluster cluster;
    static TcpRelay relay;

    @BeforeAll
    static void start() throws SQLException {
        cluster = DB.cluster();
        createSchema(cluster);
        relay = new TcpRelay(cluster.standbys(), cluster.database());
    }

    @AfterAll
    static void stop() {
        if (relay != null) {
            relay.close();
        }
    }

    @AfterEach
    void resume() {
        cluster.resumeAll();
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    static Stream<Arguments> endpoints() {
        final Function<Map<String, Object>, Map<String, Object>> relayed = settings -> {
            settings.put(RoutingSettings.REPLICA_URLS, relay.jdbcUrl());
            return settings;
        };
        final Function<Map<String, Object>, Map<String, Object>> multiHost = settings -> {
            settings.put(
                    RoutingSettings.REPLICA_URLS,
                    "jdbc:postgresql://" + hostList() + "/" + cluster.database()
                            + "?loadBalanceHosts=true&targetServerType=secondary");
            return settings;
        };
        final Function<Map<String, Object>, Map<String, Object>> dataSource = settings -> {
            // The application's own data sources: a pool for the primary, and for the replicas pgjdbc's
            // data source over both hosts, which opens a connection (to either host) at each borrow.
            final HikariConfig config = new HikariConfig();
            config.setJdbcUrl(cluster.primary().jdbcUrl());
            config.setUsername(cluster.user());
            config.setPassword(cluster.password());
            config.setMaximumPoolSize(3);
            final HikariDataSource primary = new HikariDataSource(config);
            SUPPLIED_POOLS.add(primary);
            final PGSimpleDataSource replicas = new PGSimpleDataSource();
            replicas.setServerNames(
                    new String[] {cluster.standby(1).host(), cluster.standby(2).host()});
            replicas.setPortNumbers(
                    new int[] {cluster.standby(1).port(), cluster.standby(2).port()});
            replicas.setDatabaseName(cluster.database());
            replicas.setUser(cluster.user());
            replicas.setPassword(cluster.password());
            replicas.setLoadBalanceHosts(true);
            replicas.setTargetServerType("secondary");
            settings.put("jakarta.persistence.jdbc.url", null);
            settings.put("jakarta.persistence.jdbc.user", null);
            settings.put("jakarta.persistence.jdbc.password", null);
            settings.put(RoutingSettings.REPLICA_URLS, null);
            settings.put("hibernate.connection.datasource", primary);
            settings.put(RoutingSettings.REPLICA_DATASOURCES, List.of(replicas));
            return settings;
        };
        return Stream.of(
                Arguments.of("tcp relay", relayed),
                Arguments.of(MULTI_HOST, multiHost),
                Arguments.of("data source over both hosts", dataSource));
    }

    private static String hostList() {
        return cluster.standby(1).host() + ":" + cluster.standby(1).port() + ","
                + cluster.standby(2).host() + ":" + cluster.standby(2).port();
    }

    @AfterEach
    void closeSuppliedPools() {
        SUPPLIED_POOLS.forEach(HikariDataSource::close);
        SUPPLIED_POOLS.clear();
    }

    private static EntityManagerFactory emfOver(
            Function<Map<String, Object>, Map<String, Object>> endpoint, Map<String, String> more) {
        return emf(cluster, endpoint.apply(new HashMap<>(more)));
    }

    /** Inserts a note as {@code actor} (or none) and returns its id and the scope's commit token. */
    private static Object[] writeNote(EntityManagerFactory emf, String actor, String text) {
        final RoutingScope.Builder builder = RoutingScope.builder();
        if (actor != null) {
            builder.actor(actor);
        }
        try (RoutingScope scope = builder.open();
                EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            final Note note = new Note(text);
            em.persist(note);
            em.getTransaction().commit();
            return new Object[] {note.id, scope.lastCommit()};
        }
    }

    /** One statement: the port of the server that ran it, and whether it sees note {@code id}. */
    private static long[] portAndSeen(EntityManager em, long id) {
        final Object[] row =
                (Object[]) em.createNativeQuery("select inet_server_port(), (select count(*) from note where id = ?1)")
                        .setParameter(1, id)
                        .getSingleResult();
        return new long[] {((Number) row[0]).longValue(), ((Number) row[1]).longValue()};
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("endpoints")
    void actorsReads_andTokens_seeTheirWrites_whicheverStandbyBehindTheUrlIsPaused(
            String endpoint, Function<Map<String, Object>, Map<String, Object>> url) {
        try (EntityManagerFactory emf = emfOver(url, Map.of(RoutingSettings.MAX_REPLICA_LAG, "1h"))) {
            eachStandbyPaused(paused -> {
                final Node live = other(paused);
                final List<String> stale = new ArrayList<>();
                int onLive = 0;
                for (int i = 0; i < 400 && (i < ROUNDS || onLive == 0 && !endpoint.equals(MULTI_HOST)); i++) {
                    final Object[] written = writeNote(emf, "alice", "note " + i);
                    final long id = (Long) written[0];
                    final ConsistencyToken token = (ConsistencyToken) written[1];
                    try (RoutingScope ignored =
                                    RoutingScope.builder().actor("alice").open();
                            EntityManager em = emf.createEntityManager()) {
                        final long[] read = portAndSeen(em, id);
                        onLive += read[0] == live.port() ? 1 : 0;
                        if (read[1] == 0) {
                            stale.add("actor's read " + i + " on port " + read[0]);
                        }
                    }
                    try (RoutingScope ignored =
                                    RoutingScope.builder().minimum(token).open();
                            EntityManager em = emf.createEntityManager()) {
                        final long[] read = portAndSeen(em, id);
                        if (read[1] == 0) {
                            stale.add("token read " + i + " on port " + read[0]);
                        }
                    }
                }
                assertThat(stale)
                        .as(
                                "%s, %s paused: reads that missed their own write (%s)",
                                endpoint, paused, routingState(emf))
                        .isEmpty();
                if (!endpoint.equals(MULTI_HOST)) {
                    // pgjdbc picks a host at random for each new connection, so a pool can hold only
                    // connections to the paused one; the relay alternates, the data source connects anew.
                    assertThat(onLive)
                            .as(
                                    "%s: the live standby %s still serves the actor's reads (%s)",
                                    endpoint, live, routingState(emf))
                            .isPositive();
                }
            });
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("endpoints")
    void lagBound_holdsForEachServerBehindTheUrl(
            String endpoint, Function<Map<String, Object>, Map<String, Object>> url) {
        try (EntityManagerFactory emf = emfOver(
                url, Map.of(RoutingSettings.MAX_REPLICA_LAG_BYTES, "1024", RoutingSettings.MAX_REPLICA_LAG, "1h"))) {
            eachStandbyPaused(paused -> {
                final Node live = other(paused);
                for (int i = 0; i < 8; i++) {
                    writeNote(emf, null, "x".repeat(400));
                }
                cluster.awaitReplay(live, cluster.currentWalLsn(), Duration.ofSeconds(30));
                runtime(emf).checkReplicasNow();
                // What the library knows of a server behind the URL may be up to one health-check interval old,
                // as for a replica of its own: until its next check the paused one may still serve, within the
                // documented bound. Read until the library has checked the paused server since the writes (a
                // read that reaches it with older data asks it); from then on it must serve nothing.
                // A multi-host pool may hold no connection to the paused server at all: then it is never asked.
                final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                for (int i = 0;
                        !knownOverBound(emf, paused, 1024)
                                && System.nanoTime() < deadline
                                && (i < 2000 || !endpoint.equals(MULTI_HOST));
                        i++) {
                    try (EntityManager em = emf.createEntityManager()) {
                        portAndSeen(em, -1);
                    }
                }
                if (!endpoint.equals(MULTI_HOST)) {
                    assertThat(knownOverBound(emf, paused, 1024))
                            .as(
                                    "%s: the library learned that %s is over the bound (%s)",
                                    endpoint, paused, routingState(emf))
                            .isTrue();
                }
                int onPaused = 0;
                int onLive = 0;
                // At least 30 reads, and on until the live standby served one (the library learns the servers
                // behind the URL from the connections it borrows), for at most 2000.
                for (int i = 0; i < 2000 && (i < 30 || onLive == 0 && !endpoint.equals(MULTI_HOST)); i++) {
                    try (EntityManager em = emf.createEntityManager()) {
                        final long port = portAndSeen(em, -1)[0];
                        onPaused += port == paused.port() ? 1 : 0;
                        onLive += port == live.port() ? 1 : 0;
                    }
                }
                assertThat(onPaused)
                        .as(
                                "%s: reads served by %s, which is far over the 1024-byte bound (%s)",
                                endpoint, paused, routingState(emf))
                        .isZero();
                if (!endpoint.equals(MULTI_HOST)) {
                    assertThat(onLive)
                            .as("%s: reads served by the live standby", endpoint)
                            .isPositive();
                }
            });
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("endpoints")
    void unitOfWork_neverReadsOlderDataOnAnotherServerBehindTheUrl(
            String endpoint, Function<Map<String, Object>, Map<String, Object>> url) {
        try (EntityManagerFactory emf = emfOver(url, Map.of(RoutingSettings.MAX_REPLICA_LAG, "1h"))) {
            eachStandbyPaused(paused -> {
                final long id = (Long) writeNote(emf, null, "seen by one standby only")[0];
                cluster.awaitReplay(other(paused), cluster.currentWalLsn(), Duration.ofSeconds(30));
                final List<String> backInTime = new ArrayList<>();
                for (int unit = 0; unit < 12; unit++) {
                    try (EntityManager em = emf.createEntityManager()) {
                        boolean seen = false;
                        final List<String> reads = new ArrayList<>();
                        for (int tx = 0; tx < 4; tx++) {
                            em.getTransaction().begin();
                            final long[] read = portAndSeen(em, id);
                            em.getTransaction().commit();
                            reads.add(read[0] + (read[1] == 1 ? ":seen" : ":missing"));
                            if (seen && read[1] == 0) {
                                backInTime.add("unit " + unit + " " + reads);
                            }
                            seen |= read[1] == 1;
                        }
                    }
                }
                assertThat(backInTime)
                        .as(
                                "%s, %s paused: units of work whose later transaction missed a row an earlier one"
                                        + " saw (%s)",
                                endpoint, paused, routingState(emf))
                        .isEmpty();
            });
        }
    }

    // The floor for a unit of work that moves to another server behind the URL was taken only while
    // the library knew several servers there. The standby the unit had read on restarted (a new server)
    // and the health check's connection reached the other one, which made the earlier server forgotten
    // and the other one the only one known: the unit's next read went there without a floor, and
    // missed the row it had seen. (A server that gave no answer for minutes is forgotten as well.)
    @org.junit.jupiter.api.Test
    void unitOfWork_whoseStandbyRestarted_neverReadsOlderDataOnTheOnlyOtherServerKnown() {
        final Node first = cluster.standby(1);
        final Node second = cluster.standby(2);
        try (TcpRelay endpoint = new TcpRelay(List.of(first), cluster.database());
                EntityManagerFactory emf = emfOver(
                        settings -> {
                            settings.put(RoutingSettings.REPLICA_URLS, endpoint.jdbcUrl());
                            return settings;
                        },
                        Map.of(RoutingSettings.MAX_REPLICA_LAG, "1h"))) {
            io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp(emf);
            cluster.pauseReplay(second);
            final long id = (Long) writeNote(emf, null, "only the first standby has it")[0];
            cluster.awaitReplay(first, cluster.currentWalLsn(), Duration.ofSeconds(30));
            try (EntityManager em = emf.createEntityManager()) {
                final long[] before = portAndSeen(em, id);
                assertThat(before[0]).as("the first read's server").isEqualTo(first.port());
                assertThat(before[1]).as("the first read sees the row").isEqualTo(1);

                endpoint.repoint(List.of(second));
                cluster.restart(first);
                // Until the health check's connection has reached the second standby, the only server
                // the library knows behind the URL now, and counts the replica up.
                final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (true) {
                    runtime(emf).checkReplicasNow();
                    final RoutingStatus.Node replica =
                            RoutingStatus.of(emf).nodes().get(1);
                    if (replica.up()
                            && replica.servers().stream()
                                    .map(RoutingStatus.Server::port)
                                    .toList()
                                    .equals(List.of(second.port()))) {
                        break;
                    }
                    assertThat(System.nanoTime())
                            .as("only the second standby known behind the URL (%s)", routingState(emf))
                            .isLessThan(deadline);
                }
                assertThat(portAndSeen(em, id)[1])
                        .as(
                                "the same unit of work's next read, the second standby paused without the row (%s)",
                                routingState(emf))
                        .isEqualTo(1);
            }
        } finally {
            cluster.resumeReplay(second);
        }
    }

    /** The endpoints that reach both standbys within a few borrows: the relay alternates, the data source connects anew. */
    static Stream<Arguments> alternatingEndpoints() {
        return endpoints().filter(arguments -> !arguments.get()[0].equals(MULTI_HOST));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("alternatingEndpoints")
    void status_showsEachServerBehindTheUrl(String endpoint, Function<Map<String, Object>, Map<String, Object>> url) {
        try (EntityManagerFactory emf = emfOver(url, Map.of(RoutingSettings.MAX_REPLICA_LAG, "1h"))) {
            // Two units of work at once: the relay hands their two connections to the two standbys.
            try (EntityManager first = emf.createEntityManager();
                    EntityManager second = emf.createEntityManager()) {
                first.getTransaction().begin();
                second.getTransaction().begin();
                portAndSeen(first, -1);
                portAndSeen(second, -1);
                first.getTransaction().commit();
                second.getTransaction().commit();
            }
            for (int i = 0; i < 40; i++) {
                try (EntityManager em = emf.createEntityManager()) {
                    portAndSeen(em, -1);
                }
            }
            final RoutingStatus.Node replica = RoutingStatus.of(emf).nodes().get(1);
            assertThat(replica.servers())
                    .as("%s: the servers behind replica1 (%s)", endpoint, routingState(emf))
                    .extracting(RoutingStatus.Server::port)
                    .containsExactlyInAnyOrder(
                            cluster.standby(1).port(), cluster.standby(2).port());
        }
    }

    // A CloudNativePG -r Service (any instance) reaches the primary too: a connection that reached it is
    // not a replica connection, and leaves the library's pool.
    // In both orders: whichever of the pool's first connection and the health check's reaches the primary.
    @ParameterizedTest(name = "primary first: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void endpointThatAlsoReachesThePrimary_neverServesAReplicaReadThere(boolean primaryFirst) {
        final List<Node> behind = primaryFirst
                ? List.of(cluster.primary(), cluster.standby(2))
                : List.of(cluster.standby(2), cluster.primary());
        try (TcpRelay anyInstance = new TcpRelay(behind, cluster.database());
                EntityManagerFactory emf = emfOver(
                        settings -> {
                            settings.put(RoutingSettings.REPLICA_URLS, anyInstance.jdbcUrl());
                            return settings;
                        },
                        Map.of(RoutingSettings.MAX_REPLICA_LAG, "1h"))) {
            final List<String> onPrimaryAsReplica = new ArrayList<>();
            int onStandby = 0;
            // At least 40 reads, and on until the standby served one (the library learns the servers behind
            // the URL from its connections, and the health check's from its next one), for at most 2000.
            for (int i = 0; i < 2000 && (i < 40 || onStandby == 0); i++) {
                try (EntityManager em = emf.createEntityManager()) {
                    final long port = portAndSeen(em, -1)[0];
                    final RoutingStatus.Decision latest =
                            RoutingStatus.of(emf).decisions().get(0);
                    if (port == cluster.primary().port() && !latest.node().equals("primary")) {
                        onPrimaryAsReplica.add("read " + i + " counted on " + latest.node());
                    }
                    onStandby += port == cluster.standby(2).port() ? 1 : 0;
                }
            }
            assertThat(onPrimaryAsReplica)
                    .as("reads on the primary routed as replica reads (%s)", routingState(emf))
                    .isEmpty();
            assertThat(onStandby).as("the standby behind the endpoint serves").isPositive();
        }
    }

    // A restarted standby is a new server (it replays again from its last restartpoint); the one before
    // stayed known, so its URL counted as two servers, and a worker's wait took the URL as load-balanced:
    // StampedWork under RETRY ran a handler whose position no replica had (on the primary) instead of
    // giving the message back.
    @org.junit.jupiter.api.Test
    void restartedStandby_isStillOneServerBehindItsUrl() {
        try (EntityManagerFactory emf = emf(cluster, Map.of(RoutingSettings.MAX_REPLICA_LAG, "1h"))) {
            for (int i = 0; i < 4; i++) {
                try (EntityManager em = emf.createEntityManager()) {
                    portAndSeen(em, -1);
                }
            }
            cluster.restart(cluster.standby(1));
            // Until the health check's own connection has reached the restarted server.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (true) {
                runtime(emf).checkReplicasNow();
                final RoutingStatus.Node replica = RoutingStatus.of(emf).nodes().get(1);
                if (replica.up()) {
                    break;
                }
                assertThat(System.nanoTime())
                        .as("replica1 up again (%s)", routingState(emf))
                        .isLessThan(deadline);
                io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp(emf);
            }
            for (int i = 0; i < 4; i++) {
                try (EntityManager em = emf.createEntityManager()) {
                    portAndSeen(em, -1);
                }
            }
            assertThat(RoutingStatus.of(emf).nodes().get(1).servers())
                    .as("the servers behind replica1's URL (%s)", routingState(emf))
                    .hasSize(1);

            cluster.pauseReplay(cluster.standby(1));
            cluster.pauseReplay(cluster.standby(2));
            writeNote(emf, null, "no standby has it");
            final ConsistencyToken position = io.github.hibernaterouting.routing.ReadYourWrites.currentPosition(emf);
            final StampedWork work = StampedWork.builder(emf)
                    .whenBehind(StampedWork.WhenBehind.RETRY)
                    .build();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> work.run(position, 1, () -> {}))
                    .as("no replica has the position: the message is given back")
                    .isInstanceOf(io.github.hibernaterouting.routing.RetryLaterException.class);
        }
    }

    // The lag meters followed only the server the health check's connection reached: behind one URL, a
    // second standby whose replay had stopped showed in no meter, and no shipped alert could fire for it.
    @org.junit.jupiter.api.Test
    void worstLagGauges_reportAStalledServerTheHealthCheckDoesNotReach() {
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.REPLICA_URLS, relay.jdbcUrl());
        settings.put(RoutingSettings.MAX_REPLICA_LAG, "1h");
        settings.put(RoutingSettings.METER_REGISTRY, meters);
        try (EntityManagerFactory emf = emf(cluster, settings)) {
            io.github.hibernaterouting.testing.RoutingTestSupport.awaitReplicasUp(emf);
            // No read has run yet: the only server known is the one the health check's connection reached.
            final List<RoutingStatus.Server> known =
                    RoutingStatus.of(emf).nodes().get(1).servers();
            assertThat(known)
                    .as("servers known before any read (%s)", routingState(emf))
                    .hasSize(1);
            final Node checked =
                    known.get(0).port() == cluster.standby(1).port() ? cluster.standby(1) : cluster.standby(2);
            final Node stalled = other(checked);
            cluster.pauseReplay(stalled);
            for (int i = 0; i < 8; i++) {
                writeNote(emf, null, "x".repeat(400));
            }
            // Until the library has asked the stalled server (reads on several connections at once reach both
            // standbys through the relay) and the health check has seen its own server caught up.
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!(knownOverBound(emf, stalled, 1024) && gauge(meters, "hibernate.routing.replica.lag.bytes") == 0)) {
                assertThat(System.nanoTime())
                        .as("%s known behind, %s caught up (%s)", stalled, checked, routingState(emf))
                        .isLessThan(deadline);
                cluster.awaitReplay(checked, cluster.currentWalLsn(), Duration.ofSeconds(30));
                runtime(emf).checkReplicasNow();
                try (EntityManager first = emf.createEntityManager();
                        EntityManager second = emf.createEntityManager();
                        EntityManager third = emf.createEntityManager()) {
                    for (EntityManager em : List.of(first, second, third)) {
                        em.getTransaction().begin();
                        portAndSeen(em, -1);
                    }
                    for (EntityManager em : List.of(first, second, third)) {
                        em.getTransaction().commit();
                    }
                }
            }
            final double seconds = gauge(meters, "hibernate.routing.replica.lag.seconds");
            assertThat(gauge(meters, "hibernate.routing.replica.lag.worst.bytes"))
                    .as("worst lag in bytes behind replica1's URL, %s stalled (%s)", stalled, routingState(emf))
                    .isGreaterThan(1024);
            assertThat(seconds)
                    .as("replica1's lag in seconds, of the health check's server %s", checked)
                    .isZero();
            assertThat(gauge(meters, "hibernate.routing.replica.lag.worst.seconds"))
                    .as("worst lag in seconds behind replica1's URL, %s stalled (%s)", stalled, routingState(emf))
                    .isPositive();
        } finally {
            cluster.resumeAll();
        }
    }

    /** The value of replica1's gauge {@code name}; fails if there is none. */
    private static double gauge(SimpleMeterRegistry meters, String name) {
        final io.micrometer.core.instrument.Gauge gauge =
                meters.find(name).tag("node", "replica1").gauge();
        assertThat(gauge).as("a gauge %s of replica1", name).isNotNull();
        return gauge.value();
    }

    /**
     * Runs {@code test} with replay paused on each standby in turn (so on whichever the health check
     * holds), resuming it and waiting for the catch-up after each.
     */
    private static void eachStandbyPaused(java.util.function.Consumer<Node> test) {
        for (Node paused : cluster.standbys()) {
            cluster.pauseReplay(paused);
            try {
                test.accept(paused);
            } finally {
                cluster.resumeReplay(paused);
            }
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
        }
    }

    /** Whether the routing status shows {@code server}, behind replica1's URL, more than {@code bound} bytes behind. */
    private static boolean knownOverBound(EntityManagerFactory emf, Node server, long bound) {
        return RoutingStatus.of(emf).nodes().get(1).servers().stream()
                .anyMatch(s -> s.port() == server.port() && s.lagBytes() > bound);
    }

    private static Node other(Node standby) {
        return standby == cluster.standby(1) ? cluster.standby(2) : cluster.standby(1);
    }
}
