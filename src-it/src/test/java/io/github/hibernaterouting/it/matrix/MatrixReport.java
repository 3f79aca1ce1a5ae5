package io.github.hibernaterouting.it.matrix;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The matrix's table: one row per cell run, in Markdown, printed and written to a file. */
final class MatrixReport {
    /**
     * One cell's line: its factors, seed, time, operations, reads, offload and violations by kind.
     *
     * @param stoppedEarly why the actors stopped before their last operation, or null
     */
    record Row(
            Cell cell,
            long seed,
            long millis,
            int ops,
            int reads,
            double offload,
            Map<String, Long> violations,
            String stoppedEarly) {
        boolean passed() {
            return violations.isEmpty();
        }
    }

    private final List<Row> rows = new ArrayList<>();

    synchronized void add(Row row) {
        rows.add(row);
    }

    synchronized boolean isEmpty() {
        return rows.isEmpty();
    }

    /** The table, with a line saying when and on what it ran. */
    synchronized String markdown(String revision) {
        final StringBuilder text = new StringBuilder();
        text.append("Checker matrix on ")
                .append(revision)
                .append(": ")
                .append(rows.size())
                .append(" cells, ");
        text.append(rows.stream().filter(Row::passed).count()).append(" without violations, ");
        text.append(String.format(
                Locale.ROOT,
                "%.0f s of workload.%n%n",
                rows.stream().mapToLong(Row::millis).sum() / 1000.0));
        text.append(
                "| Cell | Cache | Stamps | Reads | replica_failure | Isolation | Pools | Replicas | Seed | Time | Ops | Reads served | Offload |");
        MatrixHistory.KINDS.forEach(kind -> text.append(' ').append(kind).append(" |"));
        text.append('\n');
        text.append("|---|---|---|---|---|---|---|---|---|---:|---:|---:|---:|");
        MatrixHistory.KINDS.forEach(kind -> text.append("---:|"));
        text.append('\n');
        for (Row row : rows) {
            text.append("| ").append(row.cell().id()).append(" |");
            row.cell().levels().forEach(level -> text.append(' ').append(level).append(" |"));
            text.append(' ').append(row.seed()).append(" |");
            text.append(String.format(Locale.ROOT, " %.0f s |", row.millis() / 1000.0));
            text.append(' ').append(row.ops());
            if (row.stoppedEarly() != null) {
                text.append(" (").append(row.stoppedEarly()).append(')');
            }
            text.append(" |");
            text.append(' ').append(row.reads()).append(" |");
            text.append(String.format(Locale.ROOT, " %.0f%% |", row.offload()));
            for (String kind : MatrixHistory.KINDS) {
                final long count = row.violations().getOrDefault(kind, 0L);
                text.append(' ').append(count == 0 ? "0" : "**" + count + "**").append(" |");
            }
            text.append('\n');
        }
        return text.toString();
    }

    void write(Path file, String revision) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, markdown(revision));
    }
}
