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

    static final Duration POOL_TIMEOUT = Duration.ofSeconds(5);
    static final Duration DURATION = Duration.ofSeconds(70);

    @Test
    void twoInstancesUnderLoadAndFaults_loseNoWrite_keepReadYourWrites_andAnswer5xxOnlyWhereDocumented()
            throws Exception {
        final String seedProperty = System.getProperty("it.seed", "");
        final long seed = seedProperty.isBlank() ? System.nanoTime() : Long.parseLong(seedProperty.trim());
        final Path dir = Path.of(System.getProperty("load.reportDir", "target/load-report"));
        final LoadFaultRun run = LoadFaultRun.run(new LoadFaultRun.Options(
                dir, LoadFaultRun.Workload.FAULTS, CLIENTS, 1, DURATION, PRIMARY_POOL, POOL_TIMEOUT, seed));
        System.out.println("== load and fault run, seed " + seed + " (report: " + dir.resolve("report.md") + ")");
        System.out.println(run.markdown());

        final String report = "seed " + seed + ", see " + dir.resolve("report.md");
        assertThat(run.setupError).as("setup or run error").isNull();
        assertThat(run.primaryPoolMaximum.values())
                .as("the primary pool size the processes report")
                .containsOnly(PRIMARY_POOL);
        assertThat(run.replica1PoolMaximum.values())
                .as("replica1's pool size the processes report (it bounds the reads a kill may fail)")
                .allSatisfy(maximum -> assertThat(maximum).isPositive());
        assertThat(run.faults).as("faults injected").hasSize(8);
        // That the run did real work, whatever the machine's speed (how many requests it managed is in the report).
        assertThat(run.clientsWithoutCompletedWork())
                .as("clients without an acknowledged mutation or an answered read (%s)", report)
                .isEmpty();
        assertThat(run.phasesWithoutAnsweredReads())
                .as("phases between faults in which no read was answered: a fault without load (%s)", report)
                .isEmpty();
        assertThat(run.lost).as("lost writes (%s)", report).isEmpty();
        assertThat(run.violations)
                .as("read-your-writes violations (%s)", report)
                .isEmpty();
        // The primary pools are smaller than the load: a request waits for a connection, but none may wait longer
        // than the pool timeout and fail (latencies, and requests slower than the pool timeout, are in the report).
        assertThat(run.poolTimeouts())
                .as(
                        "requests that failed because no primary connection became free within the pool timeout"
                                + " (%d ms): the pool was exhausted (%s)",
                        POOL_TIMEOUT.toMillis(), report)
                .isEmpty();
        assertThat(run.notBackAfterRedisRestart())
                .as("processes that did not store Redis markers again after the restart (%s)", report)
                .isEmpty();
        assertThat(run.undocumented())
                .as("5xx outside the documented cases (%s)", report)
                .isEmpty();
        assertThat(run.unexpectedClientErrors())
                .as("unexpected 4xx (%s)", report)
                .isEmpty();
    }
}
