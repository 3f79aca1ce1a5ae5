package io.github.hibernaterouting.audit;

import io.github.hibernaterouting.routing.sql.FunctionCatalog;
import io.github.hibernaterouting.routing.sql.SqlClassifier;
import io.github.hibernaterouting.routing.sql.internal.Masking;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
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
                // The driver's messages may quote the URL, credentials and all.
                err.println("routing-audit: cannot load the function catalog from " + Masking.url(o.catalogUrl)
                        + ": " + Masking.text(e.getMessage())
                        + " (check --catalog, --user and --password or $PGUSER/$PGPASSWORD)");
                return FAILED;
            }
        }
        AuditReport report = new AuditReport(out, new SqlClassifier(catalog, 100_000));
        if (o.decisions) {
            report.printDecisions(statements);
        } else {
            report.printSummary(statements, o);
        }
        return OK;
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
}
