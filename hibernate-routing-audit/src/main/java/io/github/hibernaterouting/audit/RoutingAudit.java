package io.github.hibernaterouting.audit;

import io.github.hibernaterouting.routing.sql.Classification;
import io.github.hibernaterouting.routing.sql.FunctionCatalog;
import io.github.hibernaterouting.routing.sql.SqlClassifier;
import io.github.hibernaterouting.routing.sql.SqlScripts;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
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
        List<AuditStatement> statements = new ArrayList<>();
        boolean hasCalls = !o.csvFiles.isEmpty();
        try {
            for (String f : o.sqlFiles) {
                List<String> parts = SqlScripts.split(Files.readString(Paths.get(f), StandardCharsets.UTF_8));
                for (int k = 0; k < parts.size(); k++) {
                    statements.add(new AuditStatement(f + ":" + (k + 1), parts.get(k), 1));
                }
            }
            for (String f : o.jsonlFiles) {
                readJsonl(f, statements);
            }
            for (String f : o.csvFiles) {
                readCsv(f, statements);
            }
        } catch (InputException e) {
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

    private void readJsonl(String file, List<AuditStatement> statements) throws IOException {
        BufferedReader reader = file.equals("-")
                ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                : Files.newBufferedReader(Paths.get(file), StandardCharsets.UTF_8);
        try (reader) {
            String line;
            int lineNo = 0;
            while ((line = reader.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                Map<String, String> obj;
                try {
                    obj = Json.topLevelMembers(line);
                } catch (RuntimeException e) {
                    throw new InputException(file + ":" + lineNo + ": not a JSON object (" + e.getMessage()
                            + "); --jsonl expects one {\"id\": ..., \"sql\": \"...\"} per line", false);
                }
                String sql = obj.get("sql");
                if (sql == null) {
                    throw new InputException(file + ":" + lineNo + ": no \"sql\" string member", false);
                }
                String id = obj.get("id");
                statements.add(new AuditStatement(id == null || id.isEmpty() ? file + ":" + lineNo : id, sql, 1));
            }
        }
    }

    private void readCsv(String file, List<AuditStatement> statements) throws IOException {
        List<List<String>> records;
        try {
            records = CsvReader.parse(Files.readString(Paths.get(file), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new InputException(file + ": " + e.getMessage(), false);
        }
        if (records.isEmpty()) {
            throw new InputException("--pg-stat-statements " + file + ": empty file; expected a header with query,calls", true);
        }
        List<String> header = records.get(0);
        int q = indexOf(header, "query");
        int c = indexOf(header, "calls");
        if (q < 0 || c < 0) {
            throw new InputException("--pg-stat-statements " + file + ": header " + header + " lacks "
                    + (q < 0 ? "query" : "calls") + "; export with e.g. \\copy (select query, calls from "
                    + "pg_stat_statements) to 'FILE.csv' csv header", true);
        }
        for (int r = 1; r < records.size(); r++) {
            List<String> rec = records.get(r);
            if (rec.size() <= Math.max(q, c)) {
                throw new InputException(file + ": row " + r + " has " + rec.size() + " fields, header has " + header.size(), false);
            }
            long calls;
            try {
                calls = Long.parseLong(rec.get(c).trim());
            } catch (NumberFormatException e) {
                throw new InputException(file + ": row " + r + ": calls is not a number: " + rec.get(c), false);
            }
            statements.add(new AuditStatement("row " + r, rec.get(q), calls));
        }
    }

    private static int indexOf(List<String> header, String column) {
        for (int i = 0; i < header.size(); i++) {
            if (header.get(i).trim().equalsIgnoreCase(column)) {
                return i;
            }
        }
        return -1;
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

    /** Bad input that the user must fix; {@code usage} selects exit status 2 over 1. */
    static final class InputException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final boolean usage;

        InputException(String message, boolean usage) {
            super(message);
            this.usage = usage;
        }
    }
}
