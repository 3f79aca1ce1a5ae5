package io.github.hibernaterouting.benchmarks.workload;

import static io.github.hibernaterouting.benchmarks.workload.Statistics.mean;
import static io.github.hibernaterouting.benchmarks.workload.Statistics.median;
import static io.github.hibernaterouting.benchmarks.workload.Statistics.medianInterval;

import io.github.hibernaterouting.testkit.PostgresCluster;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Routing overhead: the same JPA workload ({@link OverheadWorker}) through plain Hibernate with
 * HikariCP and through hibernate-routing whose one replica is the primary under another address.
 *
 * <p>Each variant runs in its own warm JVM (the plain one without hibernate-routing on the class
 * path); this process starts the server, then alternates the variants in rounds (A B, B A, …) for
 * each thread count and prints ops/s and the ratio per round. Options: {@code --threads 2,4},
 * {@code --rounds 6}, {@code --seconds 10}, {@code --warmup 20} (seconds per variant),
 * {@code --pool 8}, {@code --jfr DIR} (a JFR recording per variant), {@code --standby} (adds
 * variant C: routing with a real streaming standby and {@code check_recovery} on), {@code --split}
 * (adds variant S: plain Hibernate with the read/write split written by hand, two persistence units
 * on the same two addresses as B, which tells the library's cost from the cost of a second
 * connection), {@code --only
 * routing} (run one variant, e.g. for a profile), {@code --other-library JAR} (adds variant R:
 * routing as B, with another build of hibernate-routing, to measure a change), {@code --statements} (before measuring, one
 * single-thread run per variant with {@code pg_stat_statements}: the statements each operation
 * sends to the server, and the server's CPU per operation), {@code --pin} (the server's processes on
 * the last CPU, the workers on the others, as if they ran on separate machines; see
 * docs/performance.md for why this matters on a small machine).
 */
public final class OverheadBenchmark {
    private OverheadBenchmark() {}

    public static void main(String[] args) throws Exception {
        final Map<String, String> options = Options.parse(args);
        final int[] threadCounts = Arrays.stream(
                        options.getOrDefault("threads", "2,4").split(","))
                .mapToInt(Integer::parseInt)
                .toArray();
        final int rounds = Integer.parseInt(options.getOrDefault("rounds", "6"));
        final int seconds = Integer.parseInt(options.getOrDefault("seconds", "10"));
        final int warmup = Integer.parseInt(options.getOrDefault("warmup", "20"));
        final String pool = options.getOrDefault("pool", "8");
        final String jfr = options.get("jfr");
        final boolean standby = options.containsKey("standby");
        final boolean split = options.containsKey("split");
        final String only = options.get("only");
        // Another build of hibernate-routing (a jar) as variant R beside B, e.g. the previous release, to measure a
        // change.
        final String otherLibrary = options.get("other-library");
        final boolean statements = options.containsKey("statements");
        final int cpus = Runtime.getRuntime().availableProcessors();
        final String pin = options.containsKey("pin") ? CpuPinning.requireCpus(cpus) : null;

        final Path jar = Path.of(OverheadBenchmark.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        final Path library = jar.resolveSibling("lib").resolve("hibernate-routing.jar");
        if (!Files.isRegularFile(library)) {
            throw new IllegalStateException("run from benchmarks/target/workload.jar; " + library + " is missing");
        }
        final PostgresCluster.Builder builder = PostgresCluster.builder().standbys(standby ? 1 : 0);
        if (statements) {
            builder.serverSetting("shared_preload_libraries", "pg_stat_statements");
        }
        try (PostgresCluster cluster = builder.start()) {
            if (pin != null) {
                CpuPinning.pinServer(cpus);
            }
            WorkloadDatabase.seed(cluster);
            final String primaryUrl = cluster.primary().jdbcUrl();
            final String sameServer = WorkloadDatabase.sameServer(primaryUrl);
            final String base = String.join(" ", primaryUrl, cluster.user(), cluster.password(), pool);
            final Map<String, String> commands = new LinkedHashMap<>();
            commands.put("A plain", "plain " + base);
            commands.put("B routing", "routing " + base + " " + sameServer + " false");
            if (split) {
                commands.put("S split by hand", "split " + base + " " + sameServer);
            }
            if (otherLibrary != null) {
                commands.put(
                        "R routing, " + Path.of(otherLibrary).getFileName(),
                        "routing " + base + " " + sameServer + " false");
            }
            if (standby) {
                commands.put(
                        "C routing+standby",
                        "routing " + base + " " + cluster.standby(1).jdbcUrl() + " true");
            }
            final List<Variant> variants = new ArrayList<>();
            try {
                for (Map.Entry<String, String> entry : commands.entrySet()) {
                    if (only != null && !entry.getValue().startsWith(only + " ")) {
                        continue;
                    }
                    final String classPath = !entry.getValue().startsWith("routing")
                            ? jar.toString()
                            : jar
                                    + File.pathSeparator
                                    + (entry.getKey().startsWith("R ")
                                            ? Path.of(otherLibrary).toAbsolutePath()
                                            : library);
                    variants.add(Variant.start(
                            entry.getKey(), classPath, entry.getValue().split(" "), jfr, pin));
                }
                System.out.printf(
                        Locale.ROOT,
                        "server: PostgreSQL on %s; pool %s; %d s per run; JDK %s; %s%n",
                        primaryUrl,
                        pool,
                        seconds,
                        System.getProperty("java.version"),
                        pin == null
                                ? cpus + " CPUs shared by server and workers"
                                : "server on CPU " + (cpus - 1) + ", workers on CPUs " + pin);
                for (int w = 0; w < 2; w++) {
                    for (Variant variant : variants) {
                        variant.run(threadCounts[threadCounts.length - 1], warmup / 2);
                    }
                }
                if (statements) {
                    ServerAccounting.countStatements(cluster, variants, seconds);
                }
                for (int threads : threadCounts) {
                    measure(variants, threads, rounds, seconds);
                }
            } finally {
                for (Variant variant : variants) {
                    variant.quit();
                }
            }
        }
    }

    private static void measure(List<Variant> variants, int threads, int rounds, int seconds) throws IOException {
        final int n = variants.size();
        final double[][] ops = new double[rounds][n];
        final double[][] cpu = new double[rounds][n];
        // Ratios: every variant against A; and B against S (the split written by hand) when both run.
        final List<int[]> pairs = new ArrayList<>();
        for (int v = 1; v < n; v++) {
            pairs.add(new int[] {v, 0});
        }
        final int b = indexOf(variants, "B");
        final int split = indexOf(variants, "S");
        if (b >= 0 && split >= 0) {
            pairs.add(new int[] {b, split});
        }
        final int other = indexOf(variants, "R");
        if (b >= 0 && other >= 0) {
            pairs.add(new int[] {b, other});
        }
        System.out.printf(Locale.ROOT, "%n%d threads%n| round | order |", threads);
        for (Variant variant : variants) {
            System.out.printf(" %s ops/s |", variant.name());
        }
        for (int[] pair : pairs) {
            System.out.printf(
                    " %s / %s |",
                    variants.get(pair[0]).letter(), variants.get(pair[1]).letter());
        }
        for (Variant variant : variants) {
            System.out.printf(" %s JVM CPU µs/op |", variant.letter());
        }
        System.out.println();
        for (int round = 0; round < rounds; round++) {
            // Rotate the order so no variant always runs first.
            final StringBuilder order = new StringBuilder();
            for (int i = 0; i < n; i++) {
                final int v = (i + round) % n;
                order.append(variants.get(v).letter());
                final double[] result = variants.get(v).run(threads, seconds);
                ops[round][v] = result[0];
                cpu[round][v] = result[1];
            }
            System.out.printf(Locale.ROOT, "| %d | %s |", round + 1, order);
            for (double o : ops[round]) {
                System.out.printf(Locale.ROOT, " %,.0f |", o);
            }
            for (int[] pair : pairs) {
                System.out.printf(Locale.ROOT, " %.3f |", ops[round][pair[0]] / ops[round][pair[1]]);
            }
            for (double c : cpu[round]) {
                System.out.printf(Locale.ROOT, " %.0f |", c);
            }
            System.out.println();
            System.out.flush();
        }
        System.out.printf("| mean | |");
        for (int v = 0; v < n; v++) {
            System.out.printf(Locale.ROOT, " %,.0f |", mean(ops, v));
        }
        for (int[] pair : pairs) {
            final double[] ratios = Arrays.stream(ops)
                    .mapToDouble(round -> round[pair[0]] / round[pair[1]])
                    .sorted()
                    .toArray();
            System.out.printf(
                    Locale.ROOT,
                    " %.3f (mean ops ratio); median %.3f, 95%% CI of the median %s, min %.3f, max %.3f |",
                    mean(ops, pair[0]) / mean(ops, pair[1]),
                    median(ratios),
                    medianInterval(ratios),
                    ratios[0],
                    ratios[ratios.length - 1]);
        }
        for (int v = 0; v < n; v++) {
            final int variant = v;
            System.out.printf(
                    Locale.ROOT,
                    " %.0f (median %.0f) |",
                    mean(cpu, v),
                    median(Arrays.stream(cpu)
                            .mapToDouble(r -> r[variant])
                            .sorted()
                            .toArray()));
        }
        System.out.println();
        System.out.flush();
    }

    private static int indexOf(List<Variant> variants, String letter) {
        for (int v = 0; v < variants.size(); v++) {
            if (variants.get(v).letter().equals(letter)) {
                return v;
            }
        }
        return -1;
    }
}
