package io.github.hibernaterouting.it.suite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The mixed load run (docs/verification.md, "Mixed load run"): the load and fault run's setup without
 * the faults, 4 clients, two for each of demo-alice and demo-bob, sending rounds of one POST to nine
 * GETs (the GET of the new note right after the POST, then GETs of earlier notes and of the list)
 * alternately to the two sample processes, for 30 s. The report, with the share of each request kind
 * served by replicas and what the routing meters counted, goes to
 * {@code target/mixed-load-report/report.md} and to this test's output.
 *
 * <p>The replica share is reported, not asserted: how often a read finds no replica that has replayed
 * what it needs depends on the machine. What is asserted holds on any machine: no read shows less than
 * its actor's acknowledged writes, nothing fails, and, while Redis and the actors' table answer, no read
 * is sent to the primary because another request of its actor is mutating ({@code pending-write}).
 *
 * <p>{@code -Dload.clients}, {@code -Dload.clientsPerActor} and {@code -Dload.seconds} change the load;
 * {@code -Dit.seed=N} repeats the clients' choices.
 */
class MixedLoadIT {
    static final int CLIENTS = Integer.getInteger("load.clients", 4);
    /** Two clients per actor: requests of one actor overlap, as from two browser tabs. */
    static final int CLIENTS_PER_ACTOR = Integer.getInteger("load.clientsPerActor", 2);

    static final Duration DURATION = Duration.ofSeconds(Long.getLong("load.seconds", 30));
    /** The library's default primary pool: this run is not about pool exhaustion (LoadFaultIT is). */
    static final int PRIMARY_POOL = 10;

    static final Duration POOL_TIMEOUT = Duration.ofSeconds(5);
    static final String STATEMENTS = "hibernate_routing_statements_total";

    @Test
    void concurrentRequestsOfOneActor_keepReadYourWrites_andAreNotSentToThePrimaryForTheirActorsPendingWrite()
            throws Exception {
        final String seedProperty = System.getProperty("it.seed", "");
        final long seed = seedProperty.isBlank() ? System.nanoTime() : Long.parseLong(seedProperty.trim());
        final Path dir = Path.of(System.getProperty("load.mixedReportDir", "target/mixed-load-report"));
        final LoadFaultRun run = LoadFaultRun.run(new LoadFaultRun.Options(
                dir,
                LoadFaultRun.Workload.MIXED,
                CLIENTS,
                CLIENTS_PER_ACTOR,
                DURATION,
                PRIMARY_POOL,
                POOL_TIMEOUT,
                seed));
        System.out.println("== mixed load run, seed " + seed + " (report: " + dir.resolve("report.md") + ")");
        System.out.println(run.markdown());

        final String report = "seed " + seed + ", see " + dir.resolve("report.md");
        assertThat(run.setupError).as("setup or run error").isNull();
        assertThat(run.clientsWithoutCompletedWork())
                .as("clients without an acknowledged POST or an answered GET (%s)", report)
                .isEmpty();
        for (String kind : List.of("read back after create", "read own note", "list (STALE_READ)")) {
            assertThat(run.ops)
                    .as("answered requests of kind '%s' (%s)", kind, report)
                    .anyMatch(op -> op.kind().equals(kind) && op.status() == 200);
        }
        assertThat(run.violations)
                .as("read-your-writes violations (%s)", report)
                .isEmpty();
        assertThat(run.lost).as("lost writes (%s)", report).isEmpty();
        assertThat(run.serverErrors()).as("5xx without faults (%s)", report).isEmpty();
        assertThat(run.unexpectedClientErrors())
                .as("unexpected 4xx (%s)", report)
                .isEmpty();

        assertThat(run.meters.errors()).as("/metrics readings (%s)", report).isEmpty();
        assertThat(run.meters.total(STATEMENTS, null, null))
                .as("statements the routing meters counted (%s)", report)
                .isPositive();
        // A marker that cannot be read also sends reads to the primary with this reason; then Redis or the actors'
        // table failed, which the run does not provoke, and the count says nothing about pending mutations.
        final long markerErrors = run.meters.total("hibernate_routing_redis_errors_total", null, null)
                + run.meters.total("hibernate_routing_actor_stamps_errors_total", null, null);
        if (markerErrors == 0) {
            assertThat(run.meters.total(STATEMENTS, "reason", "pending-write"))
                    .as(
                            "statements sent to the primary because another request of the actor was mutating, with"
                                    + " Redis and the actors' table answering (%s)",
                            report)
                    .isZero();
        }
    }
}
