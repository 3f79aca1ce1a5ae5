package io.github.hibernaterouting.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.replication.LogSequenceNumber;

class PostgresClusterIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final AtomicLong IDS = new AtomicLong();

    @RegisterExtension
    static final PostgresClusterExtension CLUSTER =
            PostgresClusterExtension.withStandbys(2).withRedis();

    @BeforeAll
    static void createTable(PostgresCluster pg) throws SQLException {
        System.out.println("Cluster (primary + 2 standbys) started in " + pg.startupMillis() + " ms");
        try (Connection c = pg.connect(pg.primary());
                Statement s = c.createStatement()) {
            System.out.println("Server: " + c.getMetaData().getDatabaseProductVersion() + " as OS user "
                    + System.getProperty("user.name"));
            s.execute("CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL)");
        }
        pg.awaitCaughtUp(TIMEOUT);
    }

    @Test
    void everyStandby_isInRecovery_andThePrimaryIsNot(PostgresCluster pg) throws SQLException {
        assertThat(pg.standbys()).extracting(Node::name).containsExactly("standby1", "standby2");
        assertThat(queryBoolean(pg, pg.primary(), "SELECT pg_is_in_recovery()")).isFalse();
        for (Node standby : pg.standbys()) {
            assertThat(queryBoolean(pg, standby, "SELECT pg_is_in_recovery()"))
                    .as(standby.name())
                    .isTrue();
        }
    }

    @Test
    void tcpRelay_handsEachNewConnectionToTheNextServer_inTurn(PostgresCluster pg) throws SQLException {
        try (TcpRelay relay = new TcpRelay(pg.standbys(), pg.database())) {
            final List<Integer> ports = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                try (Connection c = java.sql.DriverManager.getConnection(relay.jdbcUrl(), pg.user(), pg.password());
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT inet_server_port()")) {
                    rs.next();
                    ports.add(rs.getInt(1));
                }
            }
            final int first = pg.standby(1).port();
            final int second = pg.standby(2).port();
            assertThat(ports).as("the servers that answered, in order").containsExactly(first, second, first, second);
        }
    }

    @Test
    void pausedStandby_doesNotSeeNewRow_untilResumed(PostgresCluster pg) throws SQLException {
        Node paused = pg.standby(1);
        Node live = pg.standby(2);
        pg.pauseReplay(paused);
        assertThat(pg.isReplayPaused(paused)).isTrue();

        long id = insertRow(pg);
        LogSequenceNumber commitLsn = pg.currentWalLsn();

        pg.awaitReplay(live, commitLsn, TIMEOUT);
        assertThat(rowVisible(pg, live, id)).as("visible on the live standby").isTrue();
        assertThat(rowVisible(pg, paused, id))
                .as("invisible on the paused standby")
                .isFalse();
        assertThat(pg.replayLsn(paused)).isLessThan(commitLsn);

        pg.resumeReplay(paused);
        pg.awaitReplay(paused, commitLsn, TIMEOUT);
        assertThat(pg.replayLsn(paused)).isGreaterThanOrEqualTo(commitLsn);
        assertThat(rowVisible(pg, paused, id)).as("visible after resume").isTrue();
    }

    @Test
    void pausedStandby_stillReceivesWal_butAwaitReplayTimesOutNamingBothPositions(PostgresCluster pg)
            throws SQLException {
        Node standby = pg.standby(2);
        pg.pauseReplay(standby);
        insertRow(pg);
        LogSequenceNumber commitLsn = pg.currentWalLsn();

        assertThatThrownBy(() -> pg.awaitReplay(standby, commitLsn, Duration.ofMillis(200)))
                .isInstanceOf(TestkitException.class)
                .hasMessageContaining(commitLsn.asString())
                .hasMessageContaining("replay LSN")
                .hasMessageContaining("paused");
        // Left paused on purpose: the extension resumes it after this test.
    }

    @Test
    void insertOnStandby_failsWithReadOnlySqlState25006(PostgresCluster pg) throws SQLException {
        try (Connection c = pg.connect(pg.standby(1));
                Statement s = c.createStatement()) {
            assertThatThrownBy(() -> s.execute("INSERT INTO items VALUES (-1, 'nope')"))
                    .isInstanceOfSatisfying(
                            SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("25006"));
        }
    }

    @Test
    void nodeForPort_mapsInetServerPortBackToTheNode(PostgresCluster pg) throws SQLException {
        for (Node node : pg.nodes()) {
            try (Connection c = pg.connect(node);
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT inet_server_port()")) {
                rs.next();
                assertThat(pg.nodeForPort(rs.getInt(1))).isSameAs(node);
            }
        }
        assertThatThrownBy(() -> pg.nodeForPort(1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void stoppedStandby_refusesConnections_andComesBackAfterStart(PostgresCluster pg) throws SQLException {
        Node standby = pg.standby(2);
        pg.stop(standby);
        assertThat(pg.isRunning(standby)).isFalse();
        assertThatThrownBy(() -> pg.connect(standby).close())
                .isInstanceOfSatisfying(
                        SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("08001"));

        long id = insertRow(pg); // written while the standby is down: its slot keeps the WAL
        LogSequenceNumber lsn = pg.currentWalLsn();
        pg.start(standby);
        pg.awaitReplay(standby, lsn, TIMEOUT);
        assertThat(rowVisible(pg, standby, id)).isTrue();
    }

    @Test
    void killedStandby_recoversAndStreamsAgain(PostgresCluster pg) throws SQLException {
        Node standby = pg.standby(1);
        pg.kill(standby);
        assertThat(pg.isRunning(standby)).isFalse();
        assertThat(ProcScan.processesUsing(standby.dataDir())).isEmpty();

        pg.start(standby);
        long id = insertRow(pg);
        pg.awaitReplay(standby, pg.currentWalLsn(), TIMEOUT);
        assertThat(rowVisible(pg, standby, id)).isTrue();
    }

    @Test
    void primary_stopAndStart_standbysReconnectAndReplayNewWrites(PostgresCluster pg) throws SQLException {
        Node primary = pg.primary();
        pg.stop(primary);
        assertThatThrownBy(() -> pg.connect(primary).close()).isInstanceOf(SQLException.class);
        assertThat(queryBoolean(pg, pg.standby(1), "SELECT pg_is_in_recovery()"))
                .as("standby serves reads")
                .isTrue();

        pg.start(primary);
        long id = insertRow(pg);
        pg.awaitCaughtUp(TIMEOUT);
        for (Node standby : pg.standbys()) {
            assertThat(rowVisible(pg, standby, id)).as(standby.name()).isTrue();
        }
    }

    @Test
    void killedPrimary_restartsWithCrashRecovery(PostgresCluster pg) throws SQLException {
        long before = insertRow(pg);
        pg.kill(pg.primary());
        pg.start(pg.primary());
        assertThat(rowVisible(pg, pg.primary(), before)).isTrue();
        long after = insertRow(pg);
        pg.awaitCaughtUp(TIMEOUT);
        assertThat(rowVisible(pg, pg.standby(1), after)).isTrue();
    }

    @Test
    void appUser_isNotSuperuser_butAdminConnectionIs(PostgresCluster pg) throws SQLException {
        assertThat(queryBoolean(pg, pg.primary(), "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"))
                .isFalse();
        try (Connection c = pg.adminConnection(pg.primary());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")) {
            rs.next();
            assertThat(rs.getBoolean(1)).isTrue();
        }
    }

    @Test
    void externalCluster_allowsReplicationQueries_butRejectsProcessControls(PostgresCluster pg) {
        PostgresCluster attached = PostgresCluster.builder()
                .external(pg.primary().jdbcUrl(), List.of(pg.standby(1).jdbcUrl()), pg.user(), pg.password())
                .start();
        try (attached) {
            Node standby = attached.standby(1);
            assertThat(attached.nodeForPort(pg.standby(1).port())).isSameAs(standby);
            assertThat(attached.replayLsn(standby)).isNotNull();
            assertThat(standby.dataDir()).isNull();
            assertThatThrownBy(() -> attached.stop(standby))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("external");
            assertThatThrownBy(() -> attached.start(attached.primary()))
                    .isInstanceOf(UnsupportedOperationException.class);
        }
        assertThat(pg.isRunning(pg.standby(1)))
                .as("closing an attached cluster stops nothing")
                .isTrue();
    }

    @Test
    void redis_answersPing_refusesWhenStopped_andWorksAfterRestart(RedisServer redis) throws IOException {
        assertThat(redis.uri()).isEqualTo("redis://127.0.0.1:" + redis.port());
        assertThat(ping(redis.port())).isEqualTo("+PONG");

        redis.stop();
        assertThat(redis.isRunning()).isFalse();
        assertThatThrownBy(() -> ping(redis.port())).isInstanceOf(IOException.class);

        redis.restart();
        assertThat(ping(redis.port())).isEqualTo("+PONG");
    }

    @Test
    void killedRedis_isRestartedOnTheSamePort(RedisServer redis) throws IOException {
        int port = redis.port();
        redis.kill();
        assertThatThrownBy(() -> ping(port)).isInstanceOf(IOException.class);
        redis.restart();
        assertThat(redis.port()).isEqualTo(port);
        assertThat(ping(port)).isEqualTo("+PONG");
    }

    // ---------------------------------------------------------------- helpers

    static String ping(int port) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readNBytes(7), StandardCharsets.US_ASCII).trim();
        }
    }

    private static long insertRow(PostgresCluster pg) throws SQLException {
        long id = IDS.incrementAndGet();
        try (Connection c = pg.connect(pg.primary());
                Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO items VALUES (" + id + ", 'row " + id + "')");
        }
        return id;
    }

    private static boolean rowVisible(PostgresCluster pg, Node node, long id) throws SQLException {
        return queryBoolean(pg, node, "SELECT EXISTS (SELECT 1 FROM items WHERE id = " + id + ")");
    }

    private static boolean queryBoolean(PostgresCluster pg, Node node, String sql) throws SQLException {
        try (Connection c = pg.connect(node);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
