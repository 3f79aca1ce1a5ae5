package io.github.hibernaterouting.it.suite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The HTTP load and fault run (docs/verification.md, "Load and fault run"): 24 actors against two
 * sample processes whose primary pools hold 5 connections each, for 70 s, while standby1 is killed
 * and restarted, replay is paused and resumed, and Redis is restarted. The report, with the summary
 * table, goes to {@code target/load-report/report.md} and to this test's output.
 *
 * <p>Seed: {@code -Dit.seed=N} repeats the clients' choices (the faults' timing still differs).
 * {@code -Dload.clients} and {@code -Dload.primaryPool} change the load, for a closer look (with a
 * primary pool as large as the load, pool exhaustion is out of the picture).
 */
class LoadFaultIT {
    /** Client threads, one actor each ({@code -Dload.clients}): at least twice each instance's primary pool. */
    static final int CLIENTS = Integer.getInteger("load.clients", 24);
    /** The primary pool of each instance ({@code -Dload.primaryPool}). */
    static final int PRIMARY_POOL = Integer.getInteger("load.primaryPool", 5);

    static final Duration POOL_TIMEOUT = Duration.ofSeconds(2);
    static final Duration DURATION = Duration.ofSeconds(70);

    @Test
    void twoInstancesUnderLoadAndFaults_loseNoWrite_keepReadYourWrites_andAnswer5xxOnlyWhereDocumented()
            throws Exception {
        final String seedProperty = System.getProperty("it.seed", "");
        final long seed = seedProperty.isBlank() ? System.nanoTime() : Long.parseLong(seedProperty.trim());
        final Path dir = Path.of(System.getProperty("load.reportDir", "target/load-report"));
        final LoadFaultRun run =
                LoadFaultRun.run(new LoadFaultRun.Options(dir, CLIENTS, DURATION, PRIMARY_POOL, POOL_TIMEOUT, seed));
        System.out.println("== load and fault run, seed " + seed + " (report: " + dir.resolve("report.md") + ")");
        System.out.println(run.markdown());

        assertThat(run.setupError).as("setup or run error").isNull();
        assertThat(run.primaryPoolMaximum.values())
                .as("the primary pool size the processes report")
                .containsOnly(PRIMARY_POOL);
        assertThat(run.faults).as("faults injected").hasSize(8);
        assertThat(run.ops.size()).as("requests").isGreaterThan(1_000);
        assertThat(run.lost)
                .as("lost writes (see %s)", dir.resolve("report.md"))
                .isEmpty();
        assertThat(run.violations)
                .as("read-your-writes violations (see %s)", dir.resolve("report.md"))
                .isEmpty();
        assertThat(run.undocumented())
                .as("5xx outside the documented cases (see %s)", dir.resolve("report.md"))
                .isEmpty();
        assertThat(run.unexpectedClientErrors())
                .as("unexpected 4xx (see %s)", dir.resolve("report.md"))
                .isEmpty();
        assertThat(run.maxMillis())
                .as("the slowest request, against the pool timeout")
                .isLessThanOrEqualTo(POOL_TIMEOUT.toMillis());
    }
}
