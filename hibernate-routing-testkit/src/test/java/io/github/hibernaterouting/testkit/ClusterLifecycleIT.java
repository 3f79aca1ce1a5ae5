package io.github.hibernaterouting.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Start-up, teardown and failure paths: nothing may be left behind. */
class ClusterLifecycleIT {
    private Path baseDir;

    @BeforeEach
    void createBaseDir() throws IOException {
        Path shm = Path.of("/dev/shm");
        baseDir = Files.createTempDirectory(
                Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")), "hrtk-it-");
    }

    @AfterEach
    void deleteBaseDir() throws IOException {
        Os.deleteTree(baseDir);
    }

    @Test
    void close_stopsEveryProcess_andDeletesTheTempDir() throws SQLException {
        PostgresCluster pg =
                PostgresCluster.builder().standbys(2).baseDir(baseDir).start();
        Path workDir = pg.workDir();
        System.out.println("Cluster (primary + 2 standbys) started in " + pg.startupMillis() + " ms");
        assertThat(workDir).startsWith(baseDir);
        assertThat(ProcScan.processesUsing(workDir))
                .hasSizeGreaterThanOrEqualTo(3 * 4); // postmasters and their children
        try (Connection c = pg.connect(pg.standby(2));
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT 1")) {
            assertThat(rs.next()).isTrue();
        }

        pg.close();

        assertThat(ProcScan.processesUsing(workDir)).isEmpty();
        assertThat(workDir).doesNotExist();
        pg.close(); // idempotent
    }

    @Test
    void zeroStandbys_startsOnlyThePrimary() throws SQLException {
        try (PostgresCluster pg = PostgresCluster.builder()
                .standbys(0)
                .database("shop")
                .user("shopper")
                .password("pw")
                .baseDir(baseDir)
                .start()) {
            assertThat(pg.standbys()).isEmpty();
            assertThat(pg.primary().jdbcUrl())
                    .isEqualTo("jdbc:postgresql://127.0.0.1:" + pg.primary().port() + "/shop");
            try (Connection c = pg.connect(pg.primary());
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT current_user, current_database()")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("shopper");
                assertThat(rs.getString(2)).isEqualTo("shop");
            }
            pg.awaitCaughtUp(java.time.Duration.ofSeconds(1)); // trivially true without standbys
        }
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void bogusBinariesPath_failsNamingTheMissingBinary_andLeavesNothing() {
        assertThatThrownBy(() -> PostgresCluster.builder()
                        .binaries(Binaries.directory(Path.of("/nonexistent/bin")))
                        .baseDir(baseDir)
                        .start())
                .isInstanceOf(TestkitException.class)
                .hasMessageContaining("/nonexistent/bin/initdb");
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void invalidServerSetting_failsWithLogPathAndTail_andLeavesNothing() {
        assertThatThrownBy(() -> PostgresCluster.builder()
                        .serverSetting("shared_buffers", "lots")
                        .baseDir(baseDir)
                        .start())
                .isInstanceOf(TestkitException.class)
                .hasMessageContaining("primary")
                .hasMessageContaining("failed to start")
                .hasMessageContaining("primary.log")
                .hasMessageContaining("shared_buffers");
        assertThat(leftovers()).isEmpty();
        assertThat(ProcScan.processesUsing(baseDir)).isEmpty();
    }

    @Test
    void busyPort_failsSayingItCouldNotBind_andLeavesNothing() throws IOException {
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            assertThatThrownBy(() -> PostgresCluster.builder()
                            .primaryPort(busy.getLocalPort())
                            .baseDir(baseDir)
                            .start())
                    .isInstanceOf(TestkitException.class)
                    .hasMessageContaining("primary.log")
                    .hasMessageContaining("could not bind");
        }
        assertThat(leftovers()).isEmpty();
        assertThat(ProcScan.processesUsing(baseDir)).isEmpty();
    }

    @Test
    void redisClose_stopsTheProcess_andDeletesItsDir() throws IOException {
        RedisServer redis = RedisServer.start();
        Path dir = redis.workDir();
        assertThat(PostgresClusterIT.ping(redis.port())).isEqualTo("+PONG");
        redis.close();
        assertThat(redis.isRunning()).isFalse();
        assertThat(dir).doesNotExist();
        assertThatThrownBy(() -> PostgresClusterIT.ping(redis.port())).isInstanceOf(IOException.class);
    }

    private Stream<Path> leftovers() {
        try {
            return Files.list(baseDir).toList().stream();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
