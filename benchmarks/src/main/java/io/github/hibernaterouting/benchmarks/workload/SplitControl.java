package io.github.hibernaterouting.benchmarks.workload;

import io.github.hibernaterouting.testkit.PostgresCluster;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A control for {@link OverheadBenchmark} with no Hibernate and no hibernate-routing: what does it
 * cost this machine to send the writes of a mostly-read workload over a second connection to the
 * same server?
 *
 * <p>One thread, plain JDBC, the overhead workload's shape: 9 primary-key reads, then one
 * transaction that reads a row, updates it and inserts another. Variants, alternated in rounds:
 * <ul>
 * <li>{@code one}: everything on one connection (what plain Hibernate with a pool does);</li>
 * <li>{@code split}: the transactions on a second connection to the same server under another
 * address (what routing does with {@code transactions=PRIMARY});</li>
 * <li>{@code lazy}: the transaction's read on the first connection in a {@code BEGIN READ ONLY}
 * transaction, its writes on the second (what routing does with {@code transactions=LAZY}).</li>
 * </ul>
 * Options: {@code --rounds 8}, {@code --seconds 4}, {@code --pin} (server on the last CPU, this
 * process on the others, as {@link OverheadBenchmark} does).
 */
public final class SplitControl {
    private SplitControl() {}

    public static void main(String[] args) throws Exception {
        final Map<String, String> options = Options.parse(args);
        final int rounds = Integer.parseInt(options.getOrDefault("rounds", "8"));
        final int seconds = Integer.parseInt(options.getOrDefault("seconds", "4"));
        final int cpus = Runtime.getRuntime().availableProcessors();
        final String pin = options.containsKey("pin") ? CpuPinning.requireCpus(cpus) : null;
        try (PostgresCluster cluster = PostgresCluster.builder().standbys(0).start()) {
            if (pin != null) {
                CpuPinning.pinServer(cpus);
                CpuPinning.taskset(
                        "-a",
                        "-p",
                        "-c",
                        pin,
                        String.valueOf(ProcessHandle.current().pid()));
            }
            WorkloadDatabase.seed(cluster);
            final String url = cluster.primary().jdbcUrl();
            final String sameServer = WorkloadDatabase.sameServer(url);
            try (Connection first = DriverManager.getConnection(url, cluster.user(), cluster.password());
                    Connection second = DriverManager.getConnection(sameServer, cluster.user(), cluster.password())) {
                final String[] names = {"one", "split", "lazy"};
                final SplittableRandom random = new SplittableRandom(42);
                for (int warmup = 0; warmup < 3; warmup++) {
                    for (int v = 0; v < names.length; v++) {
                        run(v, first, second, random, seconds);
                    }
                }
                System.out.printf(
                        Locale.ROOT,
                        "%s; %d s per run%n| round | one ops/s | split ops/s | lazy ops/s | split / one | lazy / one |%n",
                        pin == null
                                ? cpus + " CPUs shared by server and client"
                                : "server on CPU " + (cpus - 1) + ", client on CPUs " + pin,
                        seconds);
                final double[][] ops = new double[rounds][names.length];
                for (int round = 0; round < rounds; round++) {
                    for (int i = 0; i < names.length; i++) {
                        final int v = (i + round) % names.length;
                        ops[round][v] = run(v, first, second, random, seconds);
                    }
                    System.out.printf(
                            Locale.ROOT,
                            "| %d | %,.0f | %,.0f | %,.0f | %.3f | %.3f |%n",
                            round + 1,
                            ops[round][0],
                            ops[round][1],
                            ops[round][2],
                            ops[round][1] / ops[round][0],
                            ops[round][2] / ops[round][0]);
                }
                System.out.printf(
                        Locale.ROOT,
                        "| median of rounds | | | | %.3f | %.3f |%n",
                        medianRatio(ops, 1),
                        medianRatio(ops, 2));
            }
        }
    }

    private static double medianRatio(double[][] ops, int variant) {
        final double[] ratios = Arrays.stream(ops)
                .mapToDouble(round -> round[variant] / round[0])
                .sorted()
                .toArray();
        return ratios.length % 2 == 1
                ? ratios[ratios.length / 2]
                : (ratios[ratios.length / 2 - 1] + ratios[ratios.length / 2]) / 2;
    }

    /** Runs one variant for {@code seconds}; returns operations per second (a read or a transaction is one operation). */
    private static double run(int variant, Connection first, Connection second, SplittableRandom random, int seconds)
            throws SQLException {
        final Connection writer = variant == 0 ? first : second;
        final Connection transactionReader = variant == 2 ? first : writer;
        final long start = System.nanoTime();
        final long end = start + seconds * 1_000_000_000L;
        long ops = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 9; i++) {
                read(first, 1 + random.nextInt(OverheadWorker.ITEMS));
                ops++;
            }
            final long id = 1 + random.nextInt(OverheadWorker.ITEMS);
            writer.setAutoCommit(false);
            if (transactionReader != writer) {
                transactionReader.setReadOnly(true);
                transactionReader.setAutoCommit(false);
            }
            read(transactionReader, id);
            try (PreparedStatement update =
                    writer.prepareStatement("update item set qty = qty + 1, version = version + 1 where id = ?")) {
                update.setLong(1, id);
                update.executeUpdate();
            }
            try (PreparedStatement insert = writer.prepareStatement(
                    "insert into item_event (id, item_id, text) values (nextval('item_event_seq'), ?, ?)")) {
                insert.setLong(1, id);
                insert.setString(2, "qty");
                insert.executeUpdate();
            }
            writer.commit();
            writer.setAutoCommit(true);
            if (transactionReader != writer) {
                transactionReader.commit();
                transactionReader.setAutoCommit(true);
                transactionReader.setReadOnly(false);
            }
            ops++;
        }
        return ops / ((System.nanoTime() - start) / 1e9);
    }

    private static void read(Connection connection, long id) throws SQLException {
        try (PreparedStatement select =
                connection.prepareStatement("select id, name, qty, version from item where id = ?")) {
            select.setLong(1, id);
            try (ResultSet rows = select.executeQuery()) {
                if (!rows.next()) {
                    throw new IllegalStateException("item " + id + " missing");
                }
            }
        }
    }
}
