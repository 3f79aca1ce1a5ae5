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
import java.nio.file.Path;
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

    private static final String USAGE_TEXT = """
            Usage: routing-audit [options] [FILE.sql ...]

            Classifies SQL statements the way hibernate-routing does and reports which could run on a
            PostgreSQL hot standby (REPLICA) and which must run on the primary (PRIMARY).

            Inputs (any combination, at least one):
              FILE.sql                      SQL scripts, split into statements like psql does
                                            (psql backslash commands such as \\set are skipped)
              --jsonl FILE|-                JSON Lines, one {"id": ..., "sql": "..."} per line
                                            (other fields ignored; - reads standard input)
              --pg-stat-statements FILE.csv CSV export of pg_stat_statements with a header that
                                            contains at least the columns query and calls

            Output:
              (default)                     summary: replica-safe share of statements (and of calls
                                            for pg_stat_statements), top reasons for the primary
              --decisions                   one line per statement: id<TAB>PRIMARY|REPLICA
                                            (ids: the jsonl id, FILE:N for the Nth statement of a
                                            .sql file, "row N" for the Nth CSV data row)
              --top N                       how many reasons to list in the summary (default 10)

            Function knowledge:
              --catalog JDBC_URL            also read function volatility from this database's
                                            pg_proc, e.g. jdbc:postgresql://localhost:5432/app
              --user NAME, --password PW    credentials for --catalog (default: $PGUSER, $PGPASSWORD)
              Without --catalog only PostgreSQL's built-in functions are known, and calls of your
              own functions count as PRIMARY.

              -h, --help                    this text
            """;

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
        Options o;
        try {
            o = Options.parse(args, env);
        } catch (UsageException e) {
            err.println("routing-audit: " + e.getMessage());
            err.println("Run routing-audit --help for usage.");
            return USAGE;
        }
        if (o.help) {
            out.print(USAGE_TEXT);
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

    private void printSummary(List<AuditStatement> statements, SqlClassifier classifier, boolean hasCalls, Options o) {
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

    private FunctionCatalog loadCatalog(Options o) throws SQLException {
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

    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /** The parsed command line. */
    static final class Options {
        final List<String> sqlFiles = new ArrayList<>();
        final List<String> jsonlFiles = new ArrayList<>();
        final List<String> csvFiles = new ArrayList<>();
        boolean decisions;
        boolean help;
        int top = 10;
        String catalogUrl;
        String user;
        String password;

        static Options parse(String[] args, Map<String, String> env) throws UsageException {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                String inlineValue = null;
                if (a.startsWith("--") && a.contains("=")) {
                    inlineValue = a.substring(a.indexOf('=') + 1);
                    a = a.substring(0, a.indexOf('='));
                }
                switch (a) {
                    case "-h", "--help" -> o.help = true;
                    case "--decisions" -> o.decisions = true;
                    case "--jsonl" -> {
                        String v = inlineValue != null ? inlineValue : value(args, ++i, a, "a JSON Lines file or - for stdin");
                        if (!v.equals("-")) {
                            requireFile(a, v);
                        }
                        o.jsonlFiles.add(v);
                    }
                    case "--pg-stat-statements" -> {
                        String v = inlineValue != null ? inlineValue : value(args, ++i, a, "a CSV file exported from pg_stat_statements");
                        requireFile(a, v);
                        o.csvFiles.add(v);
                    }
                    case "--catalog" -> {
                        String v = inlineValue != null ? inlineValue : value(args, ++i, a, "a JDBC URL such as jdbc:postgresql://host:5432/db");
                        if (!v.startsWith("jdbc:postgresql:")) {
                            throw new UsageException("--catalog " + redact(v) + ": not a PostgreSQL JDBC URL; use e.g. jdbc:postgresql://localhost:5432/app");
                        }
                        o.catalogUrl = v;
                    }
                    case "--user" -> o.user = inlineValue != null ? inlineValue : value(args, ++i, a, "a database user name");
                    case "--password" -> o.password = inlineValue != null ? inlineValue : value(args, ++i, a, "a password (or set $PGPASSWORD)");
                    case "--top" -> {
                        String v = inlineValue != null ? inlineValue : value(args, ++i, a, "a positive number");
                        try {
                            o.top = Integer.parseInt(v);
                        } catch (NumberFormatException e) {
                            o.top = -1;
                        }
                        if (o.top <= 0) {
                            throw new UsageException("--top " + v + ": not a positive number; use e.g. --top 20");
                        }
                    }
                    default -> {
                        if (a.startsWith("-") && !a.equals("-")) {
                            throw new UsageException("unknown option " + a + "; see --help for the options");
                        }
                        if (a.equals("-")) {
                            throw new UsageException("- (stdin) is only supported as --jsonl -");
                        }
                        if (!a.toLowerCase(Locale.ROOT).endsWith(".sql")) {
                            throw new UsageException(a + ": not a .sql file; use --jsonl FILE for JSON Lines or "
                                    + "--pg-stat-statements FILE.csv for a pg_stat_statements export");
                        }
                        requireFile("SQL file", a);
                        o.sqlFiles.add(a);
                    }
                }
            }
            if (o.help) {
                return o;
            }
            if (o.sqlFiles.isEmpty() && o.jsonlFiles.isEmpty() && o.csvFiles.isEmpty()) {
                throw new UsageException("no input; give FILE.sql arguments, --jsonl FILE or --pg-stat-statements FILE.csv");
            }
            if (o.catalogUrl == null && (o.user != null || o.password != null)) {
                throw new UsageException((o.user != null ? "--user" : "--password") + " only applies with --catalog JDBC_URL");
            }
            if (o.catalogUrl != null) {
                if (o.user == null) {
                    o.user = env.get("PGUSER");
                }
                if (o.password == null) {
                    o.password = env.get("PGPASSWORD");
                }
            }
            return o;
        }

        private static String value(String[] args, int i, String option, String what) throws UsageException {
            if (i >= args.length || args[i].startsWith("--")) {
                throw new UsageException(option + " needs " + what);
            }
            return args[i];
        }

        private static void requireFile(String option, String file) throws UsageException {
            Path p = Paths.get(file);
            if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
                throw new UsageException(option + " " + file + ": no such readable file");
            }
        }
    }
}
