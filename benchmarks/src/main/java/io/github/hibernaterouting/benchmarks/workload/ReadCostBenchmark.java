package io.github.hibernaterouting.benchmarks.workload;

import static io.github.hibernaterouting.benchmarks.workload.Statistics.median;
import static io.github.hibernaterouting.benchmarks.workload.Statistics.medianInterval;

import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What one read costs, on the primary and on a standby, with and without the library: the same
 * primary-key lookup of a {@link Doc} as plain JDBC, plain Hibernate and hibernate-routing, in one
 * JVM against one cluster (a primary and one streaming standby on this machine), alternated in
 * rounds, so that the standby's own cost and the library's are told apart.
 *
 * <p>Variants: {@code JP}/{@code JS} plain JDBC through a HikariCP pool on the primary/standby;
 * {@code HP}/{@code HS} plain Hibernate (HikariCP, no routing settings) on the primary/standby;
 * {@code LP} hibernate-routing under {@code Strategy.PRIMARY}; {@code LR} hibernate-routing, a
 * replica read (the default strategy, no actor); {@code LA} the same in a scope with an actor that
 * has written (the LSN gate compares the standby's position with the actor's stamp).
 *
 * <p>Each unit of work is one lookup in its own connection borrow (JDBC) or EntityManager, as one
 * request's short read would be. A round runs every variant for {@code --ops} lookups, in an order
 * that rotates from round to round, with {@code --gap-us} between lookups (a request rate, not a
 * saturation test). Printed: each variant's median and p99 over all rounds, the per-round median
 * ratio to its baseline with a 95 % interval, and, from a separate pass per variant, the round
 * trips each unit of work makes to each server (TCP data segments the client sends, read with
 * {@code ss}) and the statements {@code pg_stat_statements} counts on each server.
 *
 * <p>Options: {@code --rounds 12}, {@code --ops 400}, {@code --gap-us 500}, {@code --warmup 4000}
 * (lookups per variant), {@code --count 2000} (lookups per variant in the counting pass).
 */
public final class ReadCostBenchmark {
    private ReadCostBenchmark() {}

    static final int ROWS = 1000;

    /** {@code --sleep}: the thread sleeps between lookups (as a request thread waits), instead of spinning. */
    static boolean SLEEP;

    /** {@code --port-query}: after the timed lookup, the same EntityManager asks {@code select inet_server_port()}. */
    static boolean PORT_QUERY;

    static final String LOOKUP = "select d.id, d.owner, d.val, d.version from doc d where d.id = ?";

    /** One unit of work: a lookup of row {@code id}. */
    interface Read {
        void run(long id) throws Exception;
    }

    record Variant(String letters, String label, String baseline, Read read) {}

    public static void main(String[] args) throws Exception {
        final Map<String, String> options = Options.parse(args);
        final int rounds = Integer.parseInt(options.getOrDefault("rounds", "12"));
        final int ops = Integer.parseInt(options.getOrDefault("ops", "400"));
        final long gapNanos = Long.parseLong(options.getOrDefault("gap-us", "500")) * 1000L;
        final int warmup = Integer.parseInt(options.getOrDefault("warmup", "4000"));
        final int count = Integer.parseInt(options.getOrDefault("count", "2000"));
        SLEEP = options.containsKey("sleep");
        PORT_QUERY = options.containsKey("port-query");
        final int standbys = Integer.parseInt(options.getOrDefault("standbys", "1"));
        METERS = options.containsKey("meters");
        try (PostgresCluster cluster = PostgresCluster.builder()
                .standbys(standbys)
                .serverSetting("shared_preload_libraries", "pg_stat_statements")
                .start()) {
            final Node primary = cluster.primary();
            final Node standby = cluster.standby(1);
            try (Connection c = cluster.adminConnection(primary);
                    Statement s = c.createStatement()) {
                s.execute("create extension if not exists pg_stat_statements");
            }
            try (Connection c = cluster.connect(primary);
                    Statement s = c.createStatement()) {
                s.execute(
                        "create table doc (id bigint primary key, owner int not null, val bigint not null, version bigint not null)");
                s.execute("insert into doc select i, 0, i, 0 from generate_series(1, " + ROWS + ") i");
                s.execute("vacuum analyze doc");
            }
            cluster.awaitCaughtUp(Duration.ofSeconds(60));
            final List<AutoCloseable> resources = new ArrayList<>();
            try {
                final List<Variant> variants = variants(cluster, resources);
                System.out.printf(
                        Locale.ROOT,
                        "primary %s, standby %s; %d rounds of %d lookups per variant, %d µs between lookups; JDK %s,"
                                + " %d CPUs shared by the servers and this JVM%n",
                        primary.jdbcUrl(),
                        standby.jdbcUrl(),
                        rounds,
                        ops,
                        gapNanos / 1000,
                        System.getProperty("java.version"),
                        Runtime.getRuntime().availableProcessors());
                final SplittableRandom random = new SplittableRandom(42);
                for (Variant variant : variants) {
                    measure(variant, warmup, gapNanos, random);
                }
                ServerTraffic.count(cluster, variants, count, random);
                report(variants, rounds, ops, gapNanos, random);
            } finally {
                for (int i = resources.size() - 1; i >= 0; i--) {
                    resources.get(i).close();
                }
            }
        }
    }

    private static List<Variant> variants(PostgresCluster cluster, List<AutoCloseable> resources) throws Exception {
        final Node primary = cluster.primary();
        final Node standby = cluster.standby(1);
        final HikariDataSource jdbcPrimary = resource(resources, PlainReads.pool(cluster, primary));
        final HikariDataSource jdbcStandby = resource(resources, PlainReads.pool(cluster, standby));
        final EntityManagerFactory hibernatePrimary = resource(resources, PlainReads.plainHibernate(cluster, primary));
        final EntityManagerFactory hibernateStandby = resource(resources, PlainReads.plainHibernate(cluster, standby));
        final EntityManagerFactory routing = resource(resources, routing(cluster));
        // The actor of LA writes once, so its stamp is a real position the gate compares with.
        try (RoutingScope ignored = RoutingScope.builder().actor("reader").open();
                EntityManager em = routing.createEntityManager()) {
            em.getTransaction().begin();
            em.find(Doc.class, 1L).val++;
            em.getTransaction().commit();
        }
        cluster.awaitCaughtUp(Duration.ofSeconds(60));
        final List<Variant> variants = new ArrayList<>();
        variants.add(new Variant("JP", "plain JDBC, primary", null, id -> jdbc(jdbcPrimary, id)));
        variants.add(new Variant("JS", "plain JDBC, standby", "JP", id -> jdbc(jdbcStandby, id)));
        variants.add(new Variant("HP", "plain Hibernate, primary", "JP", id -> find(hibernatePrimary, id)));
        variants.add(new Variant("HS", "plain Hibernate, standby", "JS", id -> find(hibernateStandby, id)));
        variants.add(new Variant("LP", "routing, Strategy.PRIMARY", "HP", id -> {
            try (RoutingScope ignored = RoutingScope.open(Strategy.PRIMARY)) {
                find(routing, id);
            }
        }));
        variants.add(new Variant("LR", "routing, replica read", "HS", id -> find(routing, id)));
        variants.add(new Variant("LA", "routing, replica read, actor with a stamp", "HS", id -> {
            try (RoutingScope ignored = RoutingScope.builder().actor("reader").open()) {
                find(routing, id);
            }
        }));
        variants.add(new Variant("LW", "routing, the actor's own row right after its write", "HS", id -> {
            try (RoutingScope ignored = RoutingScope.builder().actor("writer").open();
                    EntityManager em = routing.createEntityManager()) {
                em.getTransaction().begin();
                em.find(Doc.class, id).val++;
                em.getTransaction().commit();
            }
            // A new scope, as the next request of the same actor: its reads go to a replica that has the write.
            TIMED_FROM.set(System.nanoTime());
            try (RoutingScope ignored = RoutingScope.builder().actor("writer").open()) {
                find(routing, id);
            }
        }));
        return variants;
    }

    /** Set by a variant that times only the end of its unit of work: where the timing starts. */
    static final ThreadLocal<Long> TIMED_FROM = new ThreadLocal<>();

    private static <T extends AutoCloseable> T resource(List<AutoCloseable> resources, T resource) {
        resources.add(resource);
        return resource;
    }

    private static EntityManagerFactory routing(PostgresCluster cluster) {
        final PersistenceConfiguration configuration = new PersistenceConfiguration("routing")
                .managedClass(Doc.class)
                .property(PersistenceConfiguration.JDBC_URL, cluster.primary().jdbcUrl())
                .property(PersistenceConfiguration.JDBC_USER, cluster.user())
                .property(PersistenceConfiguration.JDBC_PASSWORD, cluster.password())
                .property("hibernate.hbm2ddl.auto", "none")
                .property(
                        RoutingSettings.REPLICA_URLS,
                        cluster.standbys().stream()
                                .map(Node::jdbcUrl)
                                .collect(java.util.stream.Collectors.joining(",")))
                .property(RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE, "2")
                .property(RoutingSettings.PRIMARY_MINIMUM_IDLE, "2")
                .property(RoutingSettings.REPLICA_MAXIMUM_POOL_SIZE, "2")
                .property(RoutingSettings.REPLICA_MINIMUM_IDLE, "2");
        if (METERS) {
            configuration.property(
                    RoutingSettings.METER_REGISTRY, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
        }
        // More settings for experiments: BENCH_ROUTING_SETTINGS=hibernate.routing.x=y,…
        final String extra = System.getenv("BENCH_ROUTING_SETTINGS");
        if (extra != null && !extra.isBlank()) {
            for (String setting : extra.split(",")) {
                final String[] keyValue = setting.split("=", 2);
                configuration.property(keyValue[0].trim(), keyValue[1].trim());
            }
        }
        return configuration.createEntityManagerFactory();
    }

    private static void jdbc(HikariDataSource pool, long id) throws SQLException {
        try (Connection c = pool.getConnection();
                PreparedStatement s = c.prepareStatement(LOOKUP)) {
            s.setLong(1, id);
            try (ResultSet rows = s.executeQuery()) {
                if (!rows.next()) {
                    throw new IllegalStateException("row " + id + " missing");
                }
            }
        }
    }

    private static void find(EntityManagerFactory emf, long id) {
        try (EntityManager em = emf.createEntityManager()) {
            if (em.find(Doc.class, id) == null) {
                throw new IllegalStateException("row " + id + " missing");
            }
            if (PORT_QUERY) {
                UNTIMED.set(System.nanoTime());
                em.createNativeQuery("select inet_server_port()").getSingleResult();
            }
        }
    }

    static boolean METERS;
    static final ThreadLocal<Long> UNTIMED = new ThreadLocal<>();

    /** Runs {@code ops} lookups of {@code variant}, {@code gapNanos} apart; returns each one's nanoseconds. */
    static long[] measure(Variant variant, int ops, long gapNanos, SplittableRandom random) throws Exception {
        final long[] nanos = new long[ops];
        long next = System.nanoTime();
        for (int i = 0; i < ops; i++) {
            if (SLEEP) {
                final long wait = next - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
                }
            } else {
                while (System.nanoTime() < next) {
                    Thread.onSpinWait();
                }
            }
            final long id = 1 + random.nextInt(ROWS);
            final long started = System.nanoTime();
            UNTIMED.remove();
            TIMED_FROM.remove();
            variant.read().run(id);
            final Long untimed = UNTIMED.get();
            final Long from = TIMED_FROM.get();
            nanos[i] = (untimed != null ? untimed : System.nanoTime()) - (from != null ? from : started);
            next = System.nanoTime() + gapNanos;
        }
        return nanos;
    }

    private static void report(List<Variant> variants, int rounds, int ops, long gapNanos, SplittableRandom random)
            throws Exception {
        final int n = variants.size();
        final long[][][] samples = new long[n][rounds][];
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < n; i++) {
                final int v = (i + round) % n;
                samples[v][round] = measure(variants.get(v), ops, gapNanos, random);
            }
        }
        System.out.println();
        System.out.println(
                "| variant | median | p99 | against | median ratio (95 % interval over rounds) | p99 ratio |");
        System.out.println("|---|---:|---:|---|---|---:|");
        final Map<String, Integer> index = new LinkedHashMap<>();
        for (int v = 0; v < n; v++) {
            index.put(variants.get(v).letters(), v);
        }
        for (int v = 0; v < n; v++) {
            final Variant variant = variants.get(v);
            final long[] all = flatten(samples[v]);
            final String against;
            if (variant.baseline() == null) {
                against = "| | | |";
            } else {
                final int b = index.get(variant.baseline());
                final double[] ratios = new double[rounds];
                for (int round = 0; round < rounds; round++) {
                    ratios[round] = percentile(sorted(samples[v][round]), 0.5)
                            / (double) percentile(sorted(samples[b][round]), 0.5);
                }
                Arrays.sort(ratios);
                final long[] base = flatten(samples[b]);
                against = String.format(
                        Locale.ROOT,
                        "| %s | %.3f (%s) | %.2f |",
                        variant.baseline(),
                        median(ratios),
                        medianInterval(ratios),
                        percentile(all, 0.99) / (double) percentile(base, 0.99));
            }
            System.out.printf(
                    Locale.ROOT,
                    "| %s %s | %.3f ms | %.3f ms %s%n",
                    variant.letters(),
                    variant.label(),
                    percentile(all, 0.5) / 1e6,
                    percentile(all, 0.99) / 1e6,
                    against);
        }
        // The question of the issue, from the same rounds: a replica read against a primary read, with the library
        // and with plain JDBC.
        final double[] library = new double[rounds];
        final double[] jdbc = new double[rounds];
        for (int round = 0; round < rounds; round++) {
            library[round] = percentile(sorted(samples[index.get("LR")][round]), 0.5)
                    / (double) percentile(sorted(samples[index.get("LP")][round]), 0.5);
            jdbc[round] = percentile(sorted(samples[index.get("JS")][round]), 0.5)
                    / (double) percentile(sorted(samples[index.get("JP")][round]), 0.5);
        }
        Arrays.sort(library);
        Arrays.sort(jdbc);
        System.out.printf(
                Locale.ROOT,
                "%nstandby / primary, medians per round: routing (LR / LP) %.3f (%s); plain JDBC (JS / JP) %.3f (%s)%n",
                median(library),
                medianInterval(library),
                median(jdbc),
                medianInterval(jdbc));
    }

    private static long[] flatten(long[][] rounds) {
        return sorted(Arrays.stream(rounds).flatMapToLong(Arrays::stream).toArray());
    }

    private static long[] sorted(long[] values) {
        final long[] copy = values.clone();
        Arrays.sort(copy);
        return copy;
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
    }
}
