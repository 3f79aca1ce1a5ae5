package io.github.hibernaterouting.benchmarks.workload;

import io.github.hibernaterouting.testkit.PostgresCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the variants of {@link OverheadBenchmark} cost the server ({@code --statements}): the
 * statements {@code pg_stat_statements} counts, the transactions and sessions
 * {@code pg_stat_database} counts, and the CPU time of every {@code postgres} process, read from
 * {@code /proc}.
 */
final class ServerAccounting {
    /** {@code sysconf(_SC_CLK_TCK)}; 100 on every Linux this runs on. */
    private static final double CLOCK_TICKS = 100;

    private ServerAccounting() {}

    /**
     * Runs each variant alone on one thread and prints what reached the server per operation: every
     * statement {@code pg_stat_statements} saw (BEGIN, COMMIT and SET included) and the CPU time of
     * all server processes.
     */
    static void countStatements(PostgresCluster cluster, List<Variant> variants, int seconds)
            throws IOException, SQLException {
        try (Connection c = cluster.adminConnection(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute("create extension if not exists pg_stat_statements");
            for (int pass = 0; pass < 2 * variants.size(); pass++) {
                final Variant variant = variants.get(pass % variants.size());
                s.execute("select pg_stat_statements_reset()");
                final long[] xactBefore = transactions(s);
                final Map<String, Long> cpuBefore = serverCpuTicks();
                final String[] result = variant.runRaw(1, seconds);
                final List<Map.Entry<String, Long>> perProcess = cpuDelta(cpuBefore, serverCpuTicks());
                final long cpuTicks =
                        perProcess.stream().mapToLong(Map.Entry::getValue).sum();
                final long ops = Long.parseLong(result[1]);
                final long[] xactAfter = transactions(s);
                System.out.printf(
                        Locale.ROOT,
                        "%n%s, 1 thread, %,d operations: server CPU %.1f µs/op; JVM CPU %.1f µs/op, of which the worker thread %.1f%n"
                                + "| statements/op | query |%n",
                        variant.name(),
                        ops,
                        cpuTicks * 1e6 / CLOCK_TICKS / ops,
                        Long.parseLong(result[6]) / 1e3 / ops,
                        Long.parseLong(result[7]) / 1e3 / ops);
                double total = 0;
                try (var rows =
                        s.executeQuery("select calls, regexp_replace(query, '\\s+', ' ', 'g') from pg_stat_statements "
                                + "where query not like '%pg_stat_statements%' order by calls desc")) {
                    while (rows.next()) {
                        final double perOp = rows.getLong(1) / (double) ops;
                        total += perOp;
                        if (perOp >= 0.001) {
                            final String query = rows.getString(2);
                            System.out.printf(
                                    Locale.ROOT,
                                    "| %.3f | %s |%n",
                                    perOp,
                                    query.length() > 110 ? query.substring(0, 110) + "…" : query);
                        }
                    }
                }
                System.out.printf(Locale.ROOT, "| %.3f | total |%n", total);
                System.out.printf(
                        Locale.ROOT,
                        "commits/op %.3f, rollbacks/op %.3f, new sessions %d%n",
                        (xactAfter[0] - xactBefore[0]) / (double) ops,
                        (xactAfter[1] - xactBefore[1]) / (double) ops,
                        xactAfter[2] - xactBefore[2]);
                for (Map.Entry<String, Long> process : perProcess.subList(0, Math.min(6, perProcess.size()))) {
                    System.out.printf(
                            Locale.ROOT,
                            "server process %.1f µs/op: %s%n",
                            process.getValue() * 1e6 / CLOCK_TICKS / ops,
                            process.getKey());
                }
            }
        }
    }

    /** The database's committed and rolled-back transactions, and sessions, so far. */
    private static long[] transactions(Statement s) throws SQLException {
        s.execute("select pg_stat_clear_snapshot()");
        try (var rows = s.executeQuery(
                "select xact_commit, xact_rollback, sessions from pg_stat_database where datname = current_database()")) {
            rows.next();
            return new long[] {rows.getLong(1), rows.getLong(2), rows.getLong(3)};
        }
    }

    /** User and system CPU of every {@code postgres} process, in clock ticks, by process title. */
    static Map<String, Long> serverCpuTicks() throws IOException {
        final Map<String, Long> ticks = new TreeMap<>();
        try (var processes = Files.list(Path.of("/proc"))) {
            for (Path process : (Iterable<Path>) processes::iterator) {
                if (!process.getFileName().toString().chars().allMatch(Character::isDigit)) {
                    continue;
                }
                final String stat;
                final String title;
                try {
                    stat = Files.readString(process.resolve("stat"));
                    title = process.getFileName() + " "
                            + Files.readString(process.resolve("cmdline"))
                                    .replace('\0', ' ')
                                    .trim();
                } catch (IOException gone) {
                    continue;
                }
                if (!stat.contains("(postgres)")) {
                    continue;
                }
                // Fields after the command: state is field 3; utime and stime are fields 14 and 15.
                final String[] fields =
                        stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                ticks.put(title, Long.parseLong(fields[11]) + Long.parseLong(fields[12]));
            }
        }
        return ticks;
    }

    /** The CPU ticks each process used between two readings, most first. */
    private static List<Map.Entry<String, Long>> cpuDelta(Map<String, Long> before, Map<String, Long> after) {
        final List<Map.Entry<String, Long>> delta = new ArrayList<>();
        after.forEach((title, ticks) -> {
            final long used = ticks - before.getOrDefault(title, 0L);
            if (used > 0) {
                delta.add(Map.entry(title, used));
            }
        });
        delta.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        return delta;
    }
}
