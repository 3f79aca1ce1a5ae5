package io.github.hibernaterouting.benchmarks.workload;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What each unit of work of {@link ReadCostBenchmark} sends to each server: the round trips (TCP
 * data segments the client sends, one per request the driver flushes, read with {@code ss}) and the
 * statements each server's {@code pg_stat_statements} counts.
 */
final class ServerTraffic {
    private ServerTraffic() {}

    /**
     * One pass per variant, alone: the client's TCP data segments to each server per lookup (one per request the
     * driver flushes, so the round trips) and the statements each server's {@code pg_stat_statements} counted. The
     * library's health checks run meanwhile; an idle pass of the same length is printed for them.
     */
    static void count(
            PostgresCluster cluster, List<ReadCostBenchmark.Variant> variants, int count, SplittableRandom random)
            throws Exception {
        final List<Node> nodes = cluster.nodes();
        final String names = nodes.stream().map(Node::name).collect(java.util.stream.Collectors.joining(" | "));
        final String right = " ---: |".repeat(nodes.size());
        System.out.println();
        System.out.println(
                "| variant | round trips / unit: " + names + " | statements / unit: " + names + " | statements |");
        System.out.println("|---|" + right + right + "---|");
        final List<ReadCostBenchmark.Variant> passes = new ArrayList<ReadCostBenchmark.Variant>(variants);
        passes.add(new ReadCostBenchmark.Variant("--", "idle, as long as the last pass", null, null));
        long lastNanos = 0;
        for (ReadCostBenchmark.Variant variant : passes) {
            final Map<String, Long> before = segmentsOut(nodes);
            for (Node node : nodes) {
                resetStatements(cluster, node);
            }
            final long started = System.nanoTime();
            if (variant.read() != null) {
                ReadCostBenchmark.measure(variant, count, 0, random);
                lastNanos = System.nanoTime() - started;
            } else {
                Thread.sleep(lastNanos / 1_000_000L);
            }
            final Map<String, Long> after = segmentsOut(nodes);
            final StringBuilder row = new StringBuilder("| " + variant.letters() + " " + variant.label() + " |");
            for (Node node : nodes) {
                final String port = String.valueOf(node.port());
                row.append(String.format(
                        Locale.ROOT,
                        " %.2f |",
                        (after.getOrDefault(port, 0L) - before.getOrDefault(port, 0L)) / (double) count));
            }
            final List<String> texts = new ArrayList<>();
            for (Node node : nodes) {
                final Map<String, Long> statements = statements(cluster, node);
                row.append(String.format(
                        Locale.ROOT,
                        " %.2f |",
                        statements.values().stream().mapToLong(Long::longValue).sum() / (double) count));
                statements.forEach((query, calls) -> {
                    if (calls >= count / 100) {
                        texts.add(String.format(
                                Locale.ROOT,
                                "%s %.2f× `%s`",
                                node.name(),
                                calls / (double) count,
                                query.length() > 70 ? query.substring(0, 70) + "…" : query));
                    }
                });
            }
            row.append(' ').append(String.join("; ", texts)).append(" |");
            System.out.println(row);
        }
    }

    private static void resetStatements(PostgresCluster cluster, Node node) throws SQLException {
        try (Connection c = cluster.adminConnection(node);
                Statement s = c.createStatement()) {
            s.execute("select pg_stat_statements_reset()");
        }
    }

    private static Map<String, Long> statements(PostgresCluster cluster, Node node) throws SQLException {
        final Map<String, Long> calls = new LinkedHashMap<>();
        try (Connection c = cluster.adminConnection(node);
                Statement s = c.createStatement();
                ResultSet rows = s.executeQuery("select calls, regexp_replace(query, '\\s+', ' ', 'g')"
                        + " from pg_stat_statements where query not like '%pg_stat_statements%' order by calls desc")) {
            while (rows.next()) {
                calls.merge(rows.getString(2), rows.getLong(1), Long::sum);
            }
        }
        return calls;
    }

    private static final Pattern SOCKET = Pattern.compile(
            // A JVM's sockets show IPv4 addresses mapped into IPv6: [::ffff:127.0.0.1]:port.
            "(?:\\[::ffff:)?127\\.0\\.0\\.1\\]?:(\\d+)\\s+(?:\\[::ffff:)?127\\.0\\.0\\.1\\]?:(\\d+)");
    private static final Pattern DATA_SEGMENTS_OUT = Pattern.compile("data_segs_out:(\\d+)");

    /**
     * The TCP data segments sent so far on this machine's client sockets to each of {@code nodes}' ports, by port
     * (from {@code ss -tin}; a socket that closed in between is not counted).
     */
    private static Map<String, Long> segmentsOut(List<Node> nodes) throws IOException, InterruptedException {
        final Process ss = new ProcessBuilder("ss", "-tinH", "state", "established")
                .redirectErrorStream(true)
                .start();
        final String output = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        ss.waitFor();
        final List<String> ports =
                nodes.stream().map(n -> String.valueOf(n.port())).toList();
        final Map<String, Long> segments = new LinkedHashMap<>();
        String peer = null;
        for (String line : output.split("\n")) {
            final Matcher socket = SOCKET.matcher(line);
            if (socket.find()) {
                peer = ports.contains(socket.group(2)) ? socket.group(2) : null;
                continue;
            }
            final Matcher data = DATA_SEGMENTS_OUT.matcher(line);
            if (peer != null && data.find()) {
                segments.merge(peer, Long.parseLong(data.group(1)), Long::sum);
                peer = null;
            }
        }
        return segments;
    }
}
