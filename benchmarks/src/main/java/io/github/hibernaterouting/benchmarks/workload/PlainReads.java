package io.github.hibernaterouting.benchmarks.workload;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The control of {@link OffloadBenchmark}: during a policy's run, one more thread makes, every tick, a
 * primary-key lookup of a {@link Doc} on each server of the cluster twice, once in plain JDBC and once
 * with plain Hibernate ({@code find} in a new EntityManager), both without hibernate-routing, each
 * with a HikariCP pool of its own per server (read-only on the standbys); the lookups are spread over
 * the tick, each after a sleep as an actor's unit of work is. So what a read costs on a
 * standby and on the primary, with and without Hibernate, under the same load and the same paused
 * replay, is measured in the same run as the policies' reads.
 */
final class PlainReads implements AutoCloseable {
    private final List<Node> nodes;
    private final List<HikariDataSource> pools = new ArrayList<>();
    private final List<EntityManagerFactory> units = new ArrayList<>();
    /** Per server: the JDBC lookups' latencies, then the Hibernate lookups'. */
    private final List<List<Long>> jdbc = new ArrayList<>();

    private final List<List<Long>> hibernate = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean();
    private Thread thread;

    PlainReads(PostgresCluster cluster) {
        this.nodes = cluster.nodes();
        for (Node node : nodes) {
            pools.add(pool(cluster, node));
            units.add(plainHibernate(cluster, node));
            jdbc.add(new ArrayList<>());
            hibernate.add(new ArrayList<>());
        }
    }

    /** A HikariCP pool of two connections to {@code node}, read-only on a standby: plain JDBC, no routing. */
    static HikariDataSource pool(PostgresCluster cluster, Node node) {
        final HikariConfig config = new HikariConfig();
        config.setJdbcUrl(node.jdbcUrl());
        config.setUsername(cluster.user());
        config.setPassword(cluster.password());
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(2);
        config.setReadOnly(!node.isPrimary());
        config.setPoolName("plain-" + node.name());
        return new HikariDataSource(config);
    }

    /** A persistence unit of {@link Doc} on {@code node} alone, with no routing setting: plain Hibernate. */
    static EntityManagerFactory plainHibernate(PostgresCluster cluster, Node node) {
        return new PersistenceConfiguration("plain-" + node.name())
                .managedClass(Doc.class)
                .property(PersistenceConfiguration.JDBC_URL, node.jdbcUrl())
                .property(PersistenceConfiguration.JDBC_USER, cluster.user())
                .property(PersistenceConfiguration.JDBC_PASSWORD, cluster.password())
                .property("hibernate.hbm2ddl.auto", "none")
                .property(
                        "hibernate.connection.provider_class",
                        "org.hibernate.hikaricp.internal.HikariCPConnectionProvider")
                .property("hibernate.hikari.maximumPoolSize", "2")
                .property("hibernate.hikari.minimumIdle", "2")
                .property("hibernate.hikari.readOnly", String.valueOf(!node.isPrimary()))
                .createEntityManagerFactory();
    }

    /** Starts the control thread: both lookups on every server each tick, in an order that rotates, until {@link #stop}. */
    void start(long startNanos, long tickMillis, int actors) {
        jdbc.forEach(List::clear);
        hibernate.forEach(List::clear);
        running.set(true);
        thread = new Thread(
                () -> {
                    final int slots = 2 * nodes.size();
                    for (int tick = 0; running.get(); tick++) {
                        final long id = (tick % actors) * 1000L + (tick / actors) % OffloadBenchmark.SEED_ROWS;
                        for (int i = 0; i < slots && running.get(); i++) {
                            // Each lookup after a sleep, as each actor's unit of work comes after one: lookups
                            // back to back would run on a thread, a connection and caches still warm from the last.
                            OffloadBenchmark.sleepUntil(
                                    startNanos + (tick * slots + i) * tickMillis * 1_000_000L / slots);
                            final int n = (i + tick) % nodes.size();
                            final boolean withHibernate = (i + tick / nodes.size()) % 2 == 1;
                            final long started = System.nanoTime();
                            if (withHibernate) {
                                try (EntityManager em = units.get(n).createEntityManager()) {
                                    em.find(Doc.class, id);
                                }
                                hibernate.get(n).add(System.nanoTime() - started);
                            } else {
                                try {
                                    lookup(pools.get(n), id);
                                } catch (SQLException e) {
                                    throw new IllegalStateException(nodes.get(n) + ": " + e.getMessage(), e);
                                }
                                jdbc.get(n).add(System.nanoTime() - started);
                            }
                        }
                    }
                },
                "plain-control");
        thread.start();
    }

    void stop() throws InterruptedException {
        running.set(false);
        thread.join();
    }

    /**
     * Three lines: the median and p99 of a policy's reads that a replica served and of those the
     * primary served; this control's lookups on the primary and on the standbys; and the replica reads'
     * median and p99 against the plain Hibernate and the plain JDBC lookups on the standbys.
     */
    String report(String policy, List<Long> replicaReads, List<Long> primaryReads) {
        final long[] onReplicas = sorted(replicaReads);
        final long[] onPrimary = sorted(primaryReads);
        final long[] hibernateStandbys = sorted(hibernate, false);
        final long[] jdbcStandbys = sorted(jdbc, false);
        return String.format(
                Locale.ROOT,
                "  %s: reads a replica served: %s; the primary served: %s%n"
                        + "    control in the same run, a lookup of each kind on every server each tick: plain"
                        + " Hibernate on the primary %s, on the standbys %s; plain JDBC on the primary %s, on the"
                        + " standbys %s%n"
                        + "    replica reads / plain Hibernate on the standbys: median %.2f, p99 %.2f;"
                        + " / plain JDBC on the standbys: median %.2f, p99 %.2f%n",
                policy,
                summary(onReplicas),
                summary(onPrimary),
                summary(sorted(hibernate, true)),
                summary(hibernateStandbys),
                summary(sorted(jdbc, true)),
                summary(jdbcStandbys),
                ratio(onReplicas, hibernateStandbys, 0.50),
                ratio(onReplicas, hibernateStandbys, 0.99),
                ratio(onReplicas, jdbcStandbys, 0.50),
                ratio(onReplicas, jdbcStandbys, 0.99));
    }

    private static String summary(long[] sorted) {
        return String.format(
                Locale.ROOT,
                "%,d, median %.3f ms, p99 %.3f ms",
                sorted.length,
                OffloadBenchmark.percentile(sorted, 0.50) / 1e6,
                OffloadBenchmark.percentile(sorted, 0.99) / 1e6);
    }

    private static double ratio(long[] sorted, long[] baseline, double p) {
        return OffloadBenchmark.percentile(sorted, p) / (double) OffloadBenchmark.percentile(baseline, p);
    }

    private static long[] sorted(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    /** The latencies in {@code perServer} of the primary, or of every standby together, sorted. */
    private long[] sorted(List<List<Long>> perServer, boolean primary) {
        final List<Long> all = new ArrayList<>();
        for (int n = 0; n < nodes.size(); n++) {
            if (nodes.get(n).isPrimary() == primary) {
                all.addAll(perServer.get(n));
            }
        }
        return sorted(all);
    }

    private static void lookup(HikariDataSource pool, long id) throws SQLException {
        try (Connection c = pool.getConnection();
                PreparedStatement s = c.prepareStatement("select id, owner, val, version from doc where id = ?")) {
            s.setLong(1, id);
            try (ResultSet rows = s.executeQuery()) {
                rows.next();
            }
        }
    }

    @Override
    public void close() {
        units.forEach(EntityManagerFactory::close);
        pools.forEach(HikariDataSource::close);
    }
}
