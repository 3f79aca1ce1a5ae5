package io.github.hibernaterouting.it.suite;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.Binaries;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The replica suite (docs/verification.md, "Replica suite (two application processes)"): the sample
 * application in two JVM processes on a primary, two streaming standbys and Redis, checked over HTTP.
 * The report goes to {@code target/replica-report/}; a second test shows that a failed setup still
 * writes one, with status FAILED ({@code target/replica-report-failed-setup/}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(RoutingLeakCheck.class)
class ReplicaSuiteIT {

    @Test
    @Order(1)
    void replicaSuite_twoProcesses_allChecksPass_andTheReportSaysSo() throws Exception {
        final Path dir = Path.of(System.getProperty("replica.reportDir", "target/replica-report"));
        final SuiteReport report = ReplicaSuite.run(new ReplicaSuite.Options(dir, null, null));
        System.out.println(report.markdown());

        assertThat(dir.resolve("report.json")).exists();
        assertThat(dir.resolve("report.md")).exists();
        assertThat(report.setupError).as("setup error").isNull();
        assertThat(report.failedChecks())
                .as("failed checks (see %s)", dir.resolve("report.md"))
                .isEmpty();
        assertThat(report.status()).isEqualTo("PASSED");
        assertThat(Files.readString(dir.resolve("report.json"), StandardCharsets.UTF_8))
                .contains("\"status\":\"PASSED\"");
        assertThat(dir.resolve("logs/sample-process-A.log")).exists();
        assertThat(dir.resolve("logs/sample-process-B.log")).exists();
        assertThat(dir.resolve("logs/postgres-primary.log")).exists();
    }

    @Test
    @Order(2)
    void brokenSetup_noPostgresBinaries_stillWritesAFailedReport() throws Exception {
        final Path dir =
                Path.of(System.getProperty("replica.failedSetupReportDir", "target/replica-report-failed-setup"));
        final SuiteReport report = ReplicaSuite.run(
                new ReplicaSuite.Options(dir, Binaries.directory(Path.of("/nonexistent/replica-suite-bin")), null));

        assertThat(report.status()).isEqualTo("FAILED");
        final String json = Files.readString(dir.resolve("report.json"), StandardCharsets.UTF_8);
        final String md = Files.readString(dir.resolve("report.md"), StandardCharsets.UTF_8);
        assertThat(json)
                .contains("\"status\":\"FAILED\"")
                .contains("\"setupPhase\":\"PostgreSQL cluster")
                .contains("/nonexistent/replica-suite-bin");
        assertThat(md)
                .startsWith("# Replica suite: FAILED")
                .contains("## Setup error")
                .contains("/nonexistent/replica-suite-bin");
        // The run is still described: what was tested, even though nothing could run.
        assertThat(json)
                .contains("\"commit\":")
                .contains("\"hibernate-routing/src/main\":\"sha256:")
                .contains("\"result\":\"NOT_RUN\"");
    }

    @Test
    @Order(3)
    void brokenSetup_sampleProcessGivenABadPrimaryUrl_writesAFailedReportWithItsLog() throws Exception {
        final Path dir =
                Path.of(System.getProperty("replica.failedProcessReportDir", "target/replica-report-failed-process"));
        // Port 1 on loopback refuses connections: the sample cannot apply its schema and exits.
        final SuiteReport report =
                ReplicaSuite.run(new ReplicaSuite.Options(dir, null, "jdbc:postgresql://127.0.0.1:1/app"));

        assertThat(report.status()).isEqualTo("FAILED");
        final String json = Files.readString(dir.resolve("report.json"), StandardCharsets.UTF_8);
        assertThat(json)
                .contains("\"status\":\"FAILED\"")
                .contains("\"setupPhase\":\"sample process A\"")
                .contains("Sample process A exited");
        assertThat(dir.resolve("logs/sample-process-A.log")).content().contains("127.0.0.1:1");
        assertThat(dir.resolve("logs/postgres-primary.log")).exists();
        assertThat(report.versions).containsKeys("postgresql", "redis");
    }
}
