package io.github.hibernaterouting.audit;

import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.FunctionCatalog;
import io.github.hibernaterouting.routing.sql.SqlClassifier;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * {@code routing-audit}: shows how much of an application's SQL hibernate-routing could send to
 * read replicas, and why the rest must stay on the primary, before adopting the library.
 *
 * <p>Exit status: 0 on success, 2 for bad arguments (the message names the argument and the fix),
 * 1 when an input cannot be read or the catalog database cannot be reached.
 */
public final class RoutingAudit {

    static final int OK = 0;
    static final int FAILED = 1;
    static final int USAGE = 2;

    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> env;

    RoutingAudit(PrintStream out, PrintStream err, Map<String, String> env) {
        this.out = out;
        this.err = err;
        this.env = env;
    }

    public static void main(String[] args) {
        int status = new RoutingAudit(System.out, System.err, System.getenv()).run(args);
        System.out.flush();
        if (status != OK) {
            System.exit(status);
        }
    }

    /** Parses {@code args}, reads the inputs, prints the report; returns the exit status. */
    int run(String[] args) {
        AuditOptions o;
        try {
            o = AuditOptions.parse(args, env);
        } catch (AuditOptions.UsageException e) {
            err.println("routing-audit: " + e.getMessage());
            err.println("Run routing-audit --help for usage.");
            return USAGE;
        }
        if (o.help) {
            out.print(AuditOptions.HELP_TEXT);
            return OK;
        }
        List<AuditStatement> statements;
        boolean hasCalls = !o.csvFiles.isEmpty();
        try {
            statements = AuditInputs.read(o);
        } catch (AuditInputs.InputException e) {
            err.println("routing-audit: " + e.getMessage());
            return e.usage ? USAGE : FAILED;
        } catch (IOException | UncheckedIOException e) {
            err.println("routing-audit: cannot read input: " + e.getMessage());
            return FAILED;
        }

        FunctionCatalog catalog = FunctionCatalog.NONE;
        if (o.catalogUrl != null) {
            try {
                catalog = loadCatalog(o);
            } catch (SQLException e) {
                err.println("routing-audit: cannot load the function catalog from " + redact(o.catalogUrl) + ": "
                        + e.getMessage() + " (check --catalog, --user and --password or $PGUSER/$PGPASSWORD)");
                return FAILED;
            }
        }
        SqlClassifier classifier = new SqlClassifier(catalog, 100_000);
        if (o.decisions) {
            for (AuditStatement s : statements) {
                out.println(s.id() + '\t' + (classifier.classify(s.sql()).replicaSafe() ? "REPLICA" : "PRIMARY"));
            }
        } else {
            printSummary(statements, classifier, hasCalls, o);
        }
        return OK;
    }

    private void printSummary(List<AuditStatement> statements, SqlClassifier classifier, boolean hasCalls, AuditOptions o) {
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
        out.printf(Locale.ROOT, "routing-audit: %d statements, function knowledge: %s%n", total,
                o.catalogUrl == null ? "PostgreSQL built-ins only (add --catalog JDBC_URL for your own functions)"
                        : "built-ins + " + redact(o.catalogUrl));
        out.printf(Locale.ROOT, "  could go to replicas: %d statements (%s)%n", replica, percent(replica, total));
        out.printf(Locale.ROOT, "  must go to primary:   %d statements (%s)%n", total - replica, percent(total - replica, total));
        if (hasCalls) {
            out.printf(Locale.ROOT, "  calls that could go to replicas: %d of %d (%s)%n", replicaCalls, calls,
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
                    int byCount = Long.compare(hasCalls ? b.getValue()[1] : b.getValue()[0],
                            hasCalls ? a.getValue()[1] : a.getValue()[0]);
                    return byCount != 0 ? byCount : a.getKey().compareTo(b.getKey());
                })
                .limit(top)
                .forEach(e -> out.println(hasCalls
                        ? String.format(Locale.ROOT, "  %8d %12d  %s", e.getValue()[0], e.getValue()[1], e.getKey())
                        : String.format(Locale.ROOT, "  %8d  %s", e.getValue()[0], e.getKey())));
    }

    private static String percent(long part, long whole) {
        return whole == 0 ? "n/a" : String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }

    private FunctionCatalog loadCatalog(AuditOptions o) throws SQLException {
        Properties props = new Properties();
        if (o.user != null) {
            props.setProperty("user", o.user);
        }
        if (o.password != null) {
            props.setProperty("password", o.password);
        }
        props.setProperty("ApplicationName", "routing-audit");
        props.setProperty("readOnly", "true");
        try (Connection c = DriverManager.getConnection(o.catalogUrl, props)) {
            return FunctionCatalog.load(c);
        }
    }

    /** The URL without any password parameter, for messages. */
    static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1***");
    }
}
