package io.github.hibernaterouting.it.matrix;

import io.github.hibernaterouting.it.matrix.MatrixHistory.FinalState;
import io.github.hibernaterouting.it.matrix.MatrixHistory.Violation;
import io.github.hibernaterouting.it.matrix.MatrixWorkload.Mix;
import io.github.hibernaterouting.it.matrix.MatrixWorkload.Options;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import io.github.hibernaterouting.testkit.TcpRelay;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.hibernate.cfg.AvailableSettings;

/** Runs one cell: its persistence units, its workload and faults, the check against the primary's final state. */
final class CellRunner {
    private static final AtomicInteger RUNS = new AtomicInteger();

    /**
     * How a run departs from a matrix cell (the self-tests misconfigure cells on purpose).
     *
     * @param minReplicaReads past their own operations, the actors go on until replicas served this many reads (and,
     *     with {@code faults}, until every fault was injected): counts the workload reaches on any machine
     */
    record Plan(
            int minOps,
            int maxOps,
            boolean serialize,
            Mix mix,
            boolean faults,
            boolean pauseStandby1,
            int minReplicaReads,
            Map<String, ?> overrides) {
        static Plan matrix() {
            return new Plan(90, 130, true, Mix.FULL, true, false, 50, Map.of());
        }
    }

    /** What a run gives: the history, its violations, and the printable summary. */
    record Result(
            Cell cell,
            long seed,
            long millis,
            MatrixHistory history,
            List<Violation> violations,
            String faults,
            boolean stoppedAStandby,
            String stoppedEarly,
            String summary) {
        MatrixReport.Row row() {
            return new MatrixReport.Row(
                    cell,
                    seed,
                    millis,
                    history.ops().size(),
                    history.servedReads().size(),
                    history.offload(),
                    MatrixHistory.countByKind(violations),
                    stoppedEarly);
        }

        /** Names the cell, the seed, how to replay it and the first violations. */
        String failureMessage() {
            return "cell " + cell.describe() + ", seed " + seed + " (replay: -Dit.cell=" + cell.id() + " -Dit.seed="
                    + seed + "): " + violations.size() + " violations " + MatrixHistory.countByKind(violations)
                    + "\n" + summary;
        }
    }

    private CellRunner() {}

    static void createSchema(PostgresCluster cluster) throws SQLException {
        RoutingTestSupport.onPrimary(
                cluster,
                "create table counters (row_id int primary key, value bigint not null);"
                        + " create table shared_counters (id int primary key, value bigint not null);"
                        + " create table versioned_counters (id int primary key, value bigint not null, version bigint not null);"
                        + " create table boards (id int primary key, name text);"
                        + " create table board_notes (board_id int not null references boards, note text not null);"
                        + " create table snapshot_rows (id int primary key, value bigint not null);"
                        + " create table users (id text primary key, read_after_write_lsn pg_lsn)");
    }

    private static void reset(PostgresCluster cluster) throws SQLException {
        RoutingTestSupport.onPrimary(
                cluster,
                "truncate counters, shared_counters, versioned_counters, board_notes, boards, snapshot_rows, users;"
                        + " insert into counters select i, 0 from generate_series(0, " + (MatrixWorkload.THREADS - 1)
                        + ") i;"
                        + " insert into shared_counters values (1, 0);"
                        + " insert into versioned_counters values (1, 0, 0);"
                        + " insert into boards select i, 'board ' || i from generate_series(1, " + MatrixWorkload.BOARDS
                        + ") i;"
                        + " insert into snapshot_rows select i, 0 from generate_series(1, "
                        + MatrixWorkload.SNAPSHOT_ROWS + ") i;"
                        + " insert into users select 'actor-' || i, null from generate_series(0, "
                        + (MatrixWorkload.THREADS / 2 - 1) + ") i");
        cluster.awaitCaughtUp(Duration.ofSeconds(60));
    }

    /** The persistence-unit settings of a cell. */
    static Map<String, Object> settings(Cell cell, RedisServer redis, long seed, Map<String, ?> overrides) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, String.valueOf(cell.poolSize()));
        settings.put(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, String.valueOf(cell.poolSize()));
        // A pool deadlock shows as failures within seconds, not as a stall of 30 s per operation.
        settings.put(RoutingSettings.PRIMARY_CONNECTION_TIMEOUT, "5s");
        settings.put(RoutingSettings.REPLICA_FAILURE, cell.failure().name());
        // The Redis window must be at least the lag bound; both short, so Redis's start-up window is short.
        settings.put(RoutingSettings.MAX_REPLICA_LAG, "2s");
        if (cell.stamps() == Cell.Stamps.TABLE) {
            settings.put(RoutingSettings.ACTOR_STAMPS, "TABLE");
        }
        if (cell.stamps() == Cell.Stamps.REDIS) {
            settings.put(RoutingSettings.REDIS_URI, redis.uri());
            settings.put(RoutingSettings.REDIS_WINDOW, "2s");
            settings.put(RoutingSettings.REDIS_ALLOW_SHORT_WINDOW, "true");
            settings.put(RoutingSettings.REDIS_PREFIX, "matrix-" + cell.id() + "-" + seed);
        }
        if (cell.cache() == Cell.Cache.ON) {
            // One cache for both instances (below): say so, as a clustered cache's application would.
            settings.put(RoutingSettings.SECOND_LEVEL_CACHE_SHARED, "true");
            settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, "true");
            settings.put(AvailableSettings.USE_QUERY_CACHE, "true");
            // Hibernate's JCache provider with one lock a region for both instances, as a clustered cache
            // has: READ_WRITE over the plain provider loses updates between two session factories.
            settings.put(AvailableSettings.CACHE_REGION_FACTORY, ClusteredJCacheRegionFactory.class.getName());
            settings.put("hibernate.javax.cache.provider", "org.ehcache.jsr107.EhcacheCachingProvider");
            settings.put("hibernate.javax.cache.missing_cache_strategy", "create");
            // The same regions for both instances: one cache, as a replicated cache of a cluster would be.
            settings.put(AvailableSettings.CACHE_REGION_PREFIX, "checker-matrix-" + RUNS.incrementAndGet());
        } else {
            settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, "false");
        }
        settings.putAll(overrides);
        return settings;
    }

    /**
     * An override of a self-test: each instance gets caches of its own (regions of its own, a lock of its
     * own), as a JVM-local cache on each instance of an application has, instead of one shared cache.
     */
    static final String LOCAL_CACHES = "matrix.local_caches";

    static Result run(PostgresCluster cluster, RedisServer redis, Cell cell, long seed, Plan plan) throws Exception {
        reset(cluster);
        final Map<String, Object> settings = settings(cell, redis, seed, plan.overrides());
        final boolean localCaches = Boolean.parseBoolean(String.valueOf(settings.remove(LOCAL_CACHES)));
        if (localCaches) {
            settings.remove(RoutingSettings.SECOND_LEVEL_CACHE_SHARED);
        }
        final List<EntityManagerFactory> instances = new ArrayList<>();
        final TcpRelay relay =
                cell.endpoint() == Cell.Endpoint.RELAY ? new TcpRelay(cluster.standbys(), cluster.database()) : null;
        if (relay != null) {
            settings.put(RoutingSettings.REPLICA_URLS, relay.jdbcUrl());
        }
        try {
            for (int i = 0; i < cell.instances(); i++) {
                final Map<String, Object> instance = new HashMap<>(settings);
                if (localCaches) {
                    instance.put(
                            AvailableSettings.CACHE_REGION_PREFIX,
                            settings.get(AvailableSettings.CACHE_REGION_PREFIX) + "-" + (char) ('a' + i));
                }
                instances.add(RoutingTestSupport.emf(
                        "matrix-" + (char) ('a' + i),
                        cluster,
                        instance,
                        Counter.class,
                        SharedCounter.class,
                        VersionedCounter.class,
                        Board.class));
            }
            instances.forEach(RoutingTestSupport::awaitReplicasUp);
            if (cell.stamps() == Cell.Stamps.REDIS) {
                instances.forEach(emf -> awaitActorsOnReplicas(cluster, emf));
            }
            if (plan.pauseStandby1()) {
                cluster.pauseReplay(cluster.standby(1));
            }
            final MatrixHistory history = new MatrixHistory();
            final Options options =
                    new Options(cell, instances, seed, plan.minOps(), plan.maxOps(), plan.serialize(), plan.mix());
            final MatrixWorkload workload = new MatrixWorkload(cluster, options, history);
            final MatrixFaults faults = plan.faults()
                    ? new MatrixFaults(
                            cluster,
                            cell.stamps() == Cell.Stamps.REDIS ? redis : null,
                            seed,
                            workload::done,
                            options.expectedOps())
                    : null;
            final long start = System.nanoTime();
            workload.run(
                    faults,
                    () -> (faults != null && !faults.allInjectedOrEnded())
                            || history.replicaReads() < plan.minReplicaReads(),
                    60,
                    240);
            final long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            cluster.resumeAll();
            cluster.awaitCaughtUp(Duration.ofSeconds(60));
            if (!redis.isRunning()) {
                redis.restart();
            }
            final List<Violation> violations =
                    history.check(finalState(cluster), cell.isolation() == Cell.Isolation.REPEATABLE_READ);
            final String described = (faults == null ? "none" : faults.describe())
                    + (workload.stoppedEarly() == null ? "" : "; " + workload.stoppedEarly());
            final String summary = history.summary(violations);
            System.out.printf(
                    "%n== checker matrix: %s, seed %d, %d ms%nfaults: %s%n%s",
                    cell.describe(), seed, millis, described, summary);
            return new Result(
                    cell,
                    seed,
                    millis,
                    history,
                    violations,
                    described,
                    faults != null && faults.stoppedAStandby(),
                    workload.stoppedEarly(),
                    summary);
        } finally {
            cluster.resumeAll();
            instances.forEach(EntityManagerFactory::close);
            if (relay != null) {
                relay.close();
            }
        }
    }

    /** Every counter's value and the bag's elements, read on the primary behind the library's back. */
    static FinalState finalState(PostgresCluster cluster) throws SQLException {
        final Map<String, Long> values = new HashMap<>();
        final List<String> notes = new ArrayList<>();
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("select row_id, value from counters")) {
                while (rs.next()) {
                    values.put(MatrixWorkload.counter(rs.getInt(1)), rs.getLong(2));
                }
            }
            try (ResultSet rs = s.executeQuery("select value from shared_counters")) {
                rs.next();
                values.put("shared", rs.getLong(1));
            }
            try (ResultSet rs = s.executeQuery("select value from versioned_counters")) {
                rs.next();
                values.put("versioned", rs.getLong(1));
            }
            try (ResultSet rs = s.executeQuery("select id, value from snapshot_rows")) {
                while (rs.next()) {
                    values.put("snapshot:" + rs.getInt(1), rs.getLong(2));
                }
            }
            try (ResultSet rs = s.executeQuery("select note from board_notes")) {
                while (rs.next()) {
                    notes.add(rs.getString(1));
                }
            }
        }
        return new FinalState(values, notes);
    }

    /** Waits (bounded) until an actor's read is served by a replica: Redis's start-up window is over. */
    private static void awaitActorsOnReplicas(PostgresCluster cluster, EntityManagerFactory emf) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try (RoutingScope ignored = RoutingScope.builder().actor("probe").open();
                    EntityManager em = emf.createEntityManager()) {
                if (!RoutingTestSupport.servedBy(cluster, em).isPrimary()) {
                    return;
                }
            } catch (RuntimeException e) {
                // replica_failure=FAIL: while the actor must read the primary, its reads fail instead.
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("actors still read from the primary 30 s after Redis's start-up window (2 s)"
                        + " began; " + RoutingTestSupport.routingState(emf));
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos()); // poll interval
        }
    }
}
