package io.github.hibernaterouting.audit;

import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.SqlClassifier;
import io.github.hibernaterouting.routing.sql.internal.Masking;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code routing-audit} prints: one decision per statement, or a summary with the top
 * reasons for the primary, weighed by calls when the input has call counts.
 */
final class AuditReport {

    private final PrintStream out;
    private final SqlClassifier classifier;

    AuditReport(PrintStream out, SqlClassifier classifier) {
        this.out = out;
        this.classifier = classifier;
    }

    /** One line per statement: {@code id<TAB>REPLICA} or {@code id<TAB>PRIMARY}. */
    void printDecisions(List<AuditStatement> statements) {
        for (AuditStatement s : statements) {
            out.println(s.id() + '\t' + (classifier.classify(s.sql()).replicaSafe() ? "REPLICA" : "PRIMARY"));
        }
    }

    /**
     * How many statements (and, with a pg_stat_statements export, how many calls) could go to
     * replicas, and the {@code --top} reasons for the primary, with and without detail.
     */
    void printSummary(List<AuditStatement> statements, AuditOptions o) {
        boolean hasCalls = !o.csvFiles.isEmpty(); // only pg_stat_statements exports carry call counts
        long total = statements.size();
        long replica = 0;
        long calls = 0;
        long replicaCalls = 0;
        Map<String, long[]> byReason = new HashMap<>();
        Map<String, long[]> byDetail = new HashMap<>();
        for (AuditStatement s : statements) {
            Classification c = classifier.classify(s.sql());
            calls += s.calls();
            if (c.replicaSafe()) {
                replica++;
                replicaCalls += s.calls();
            } else {
                String reason = c.reason().name();
                byReason.computeIfAbsent(reason, k -> new long[2])[0]++;
                byReason.get(reason)[1] += s.calls();
                String detail = c.detail() == null ? reason : reason + " " + c.detail();
                byDetail.computeIfAbsent(detail, k -> new long[2])[0]++;
                byDetail.get(detail)[1] += s.calls();
            }
        }
        out.printf(
                Locale.ROOT,
                "routing-audit: %d statements, function knowledge: %s%n",
                total,
                o.catalogUrl == null
                        ? "PostgreSQL built-ins only (add --catalog JDBC_URL for your own functions)"
                        : "built-ins + " + Masking.url(o.catalogUrl));
        out.printf(Locale.ROOT, "  could go to replicas: %d statements (%s)%n", replica, percent(replica, total));
        out.printf(
                Locale.ROOT,
                "  must go to primary:   %d statements (%s)%n",
                total - replica,
                percent(total - replica, total));
        if (hasCalls) {
            out.printf(
                    Locale.ROOT,
                    "  calls that could go to replicas: %d of %d (%s)%n",
                    replicaCalls,
                    calls,
                    percent(replicaCalls, calls));
        }
        if (total > replica) {
            printTop("Top reasons for the primary", byReason, hasCalls, o.top);
            printTop("Top reasons with detail", byDetail, hasCalls, o.top);
        }
    }

    private void printTop(String title, Map<String, long[]> counts, boolean hasCalls, int top) {
        out.println();
        out.println(title + (hasCalls ? " (statements, calls):" : " (statements):"));
        counts.entrySet().stream()
                .sorted((a, b) -> {
                    int byCount = Long.compare(
                            hasCalls ? b.getValue()[1] : b.getValue()[0], hasCalls ? a.getValue()[1] : a.getValue()[0]);
                    return byCount != 0 ? byCount : a.getKey().compareTo(b.getKey());
                })
                .limit(top)
                .forEach(e -> out.println(
                        hasCalls
                                ? String.format(
                                        Locale.ROOT, "  %8d %12d  %s", e.getValue()[0], e.getValue()[1], e.getKey())
                                : String.format(Locale.ROOT, "  %8d  %s", e.getValue()[0], e.getKey())));
    }

    private static String percent(long part, long whole) {
        return whole == 0 ? "n/a" : String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }
}
