package io.github.hibernaterouting.audit;

import io.github.hibernaterouting.routing.sql.internal.Masking;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The parsed command line of {@code routing-audit}, and the help text that documents it. Every
 * mistake is a {@link UsageException} whose message names the argument and the fix.
 */
final class AuditOptions {

    /** What {@code --help} prints. */
    static final String HELP_TEXT = """
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

    final List<String> sqlFiles = new ArrayList<>();
    final List<String> jsonlFiles = new ArrayList<>();
    final List<String> csvFiles = new ArrayList<>();
    boolean decisions;
    boolean help;
    int top = 10;
    String catalogUrl;
    String user;
    String password;

    private AuditOptions() {}

    /** Parses {@code args}; {@code env} supplies {@code $PGUSER} and {@code $PGPASSWORD} for --catalog. */
    static AuditOptions parse(String[] args, Map<String, String> env) throws UsageException {
        AuditOptions o = new AuditOptions();
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
                    String v =
                            inlineValue != null ? inlineValue : value(args, ++i, a, "a JSON Lines file or - for stdin");
                    if (!v.equals("-")) {
                        requireFile(a, v);
                    }
                    o.jsonlFiles.add(v);
                }
                case "--pg-stat-statements" -> {
                    String v = inlineValue != null
                            ? inlineValue
                            : value(args, ++i, a, "a CSV file exported from pg_stat_statements");
                    requireFile(a, v);
                    o.csvFiles.add(v);
                }
                case "--catalog" -> {
                    String v = inlineValue != null
                            ? inlineValue
                            : value(args, ++i, a, "a JDBC URL such as jdbc:postgresql://host:5432/db");
                    if (!v.startsWith("jdbc:postgresql:")) {
                        throw new UsageException("--catalog " + Masking.url(v)
                                + ": not a PostgreSQL JDBC URL; use e.g. jdbc:postgresql://localhost:5432/app");
                    }
                    if (Masking.hasUserInfo(v)) {
                        throw new UsageException("--catalog " + Masking.url(v)
                                + ": the PostgreSQL driver reads no user:password@ in a URL (it would take it for the"
                                + " host); give them as --user and --password, or $PGUSER and $PGPASSWORD");
                    }
                    o.catalogUrl = v;
                }
                case "--user" ->
                    o.user = inlineValue != null ? inlineValue : value(args, ++i, a, "a database user name");
                case "--password" ->
                    o.password =
                            inlineValue != null ? inlineValue : value(args, ++i, a, "a password (or set $PGPASSWORD)");
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
            throw new UsageException(
                    "no input; give FILE.sql arguments, --jsonl FILE or --pg-stat-statements FILE.csv");
        }
        if (o.catalogUrl == null && (o.user != null || o.password != null)) {
            throw new UsageException(
                    (o.user != null ? "--user" : "--password") + " only applies with --catalog JDBC_URL");
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

    /** A command line that cannot work; {@code routing-audit} exits with status 2. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }
}
