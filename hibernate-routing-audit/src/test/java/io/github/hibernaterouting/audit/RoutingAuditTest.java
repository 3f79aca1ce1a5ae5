package io.github.hibernaterouting.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RoutingAuditTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return new RoutingAudit(
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        Map.of())
                .run(args);
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void decisionsForJsonl_useTheIdsStringOrNumber() throws IOException {
        Path f = Files.writeString(
                dir.resolve("q.jsonl"),
                "{\"id\": \"a.1\", \"sql\": \"select 1\", \"label\": \"x\"}\n"
                        + "{\"id\": 7, \"meta\": {\"k\": [1, \"}\"]}, \"sql\": \"delete from t\"}\n\n");
        assertThat(run("--jsonl", f.toString(), "--decisions")).isZero();
        assertThat(out()).isEqualTo("a.1\tREPLICA\n7\tPRIMARY\n");
    }

    @Test
    void decisionsForSqlFiles_numberTheStatements() throws IOException {
        Path f = Files.writeString(dir.resolve("app.sql"), "\\set x 1\nselect 1;\nupdate t set a = ';';\n");
        assertThat(run(f.toString(), "--decisions")).isZero();
        assertThat(out()).isEqualTo(f + ":1\tREPLICA\n" + f + ":2\tPRIMARY\n");
    }

    @Test
    void summaryForPgStatStatements_weighsByCalls() throws IOException {
        Path f = Files.writeString(
                dir.resolve("pss.csv"),
                "queryid,query,calls\n1,\"select * from users where id = $1\",900\n2,\"insert into t\nvalues ($1)\",100\n");
        assertThat(run("--pg-stat-statements", f.toString())).isZero();
        assertThat(out())
                .contains("2 statements")
                .contains("could go to replicas: 1 statements (50.0%)")
                .contains("calls that could go to replicas: 900 of 1000 (90.0%)")
                .contains("DML INSERT");
    }

    @Test
    void csvWithoutCallsColumn_isAUsageErrorNamingTheColumn() throws IOException {
        Path f = Files.writeString(dir.resolve("bad.csv"), "query\nselect 1\n");
        assertThat(run("--pg-stat-statements", f.toString())).isEqualTo(RoutingAudit.USAGE);
        assertThat(err()).contains("--pg-stat-statements").contains("lacks calls");
    }

    @Test
    void badArguments_exitWithTwoAndNameTheArgument() {
        assertThat(run()).isEqualTo(RoutingAudit.USAGE);
        assertThat(err()).contains("no input");
        err.reset();
        assertThat(run("--frobnicate")).isEqualTo(RoutingAudit.USAGE);
        assertThat(err()).contains("unknown option --frobnicate");
        err.reset();
        assertThat(run("--jsonl")).isEqualTo(RoutingAudit.USAGE);
        assertThat(err()).contains("--jsonl needs");
        err.reset();
        assertThat(run("--jsonl", dir.resolve("missing.jsonl").toString())).isEqualTo(RoutingAudit.USAGE);
        assertThat(err()).contains("no such readable file");
        err.reset();
        assertThat(run("notes.txt")).isEqualTo(RoutingAudit.USAGE);
        assertThat(err()).contains("not a .sql file");
        err.reset();
        assertThat(run("--jsonl", "-", "--catalog", "mysql://x?password=secret"))
                .isEqualTo(RoutingAudit.USAGE);
        assertThat(err()).contains("--catalog").doesNotContain("secret");
        err.reset();
        assertThat(run("--jsonl", "-", "--top", "zero")).isEqualTo(RoutingAudit.USAGE);
        assertThat(err()).contains("--top zero");
    }

    @Test
    void malformedJsonLine_failsWithFileAndLine() throws IOException {
        Path f = Files.writeString(dir.resolve("bad.jsonl"), "{\"id\": 1, \"sql\": \"select 1\"}\nnot json\n");
        assertThat(run("--jsonl", f.toString())).isEqualTo(RoutingAudit.FAILED);
        assertThat(err()).contains("bad.jsonl:2");
    }

    @Test
    void unreachableCatalog_failsWithoutPrintingThePassword() throws IOException {
        Path f = Files.writeString(dir.resolve("q.jsonl"), "{\"id\": 1, \"sql\": \"select 1\"}\n");
        int status = run(
                "--jsonl",
                f.toString(),
                "--catalog",
                "jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1&password=hunter2",
                "--password",
                "hunter2");
        assertThat(status).isEqualTo(RoutingAudit.FAILED);
        assertThat(err()).contains("cannot load the function catalog").doesNotContain("hunter2");
    }

    @Test
    void catalogUrlWithCredentials_neverShowsThem_inAnyMessage() throws IOException {
        Path f = Files.writeString(dir.resolve("q.jsonl"), "{\"id\": 1, \"sql\": \"select 1\"}\n");
        for (String url : List.of(
                "jdbc:postgresql://app:u1nfo-pw@127.0.0.1:1/none?sslpassword=s3cr3t&apiKey=k3y&connectTimeout=1",
                "jdbc:postgresql://127.0.0.1:notaport/none?sslpassword=s3cr3t&apiKey=k3y",
                "jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1&authToken=t0k3n;client_secret=s3cr3t",
                "mysql://app:u1nfo-pw@db/none?apiKey=k3y")) {
            out.reset();
            err.reset();
            assertThat(run("--jsonl", f.toString(), "--catalog", url)).isNotZero();
            assertThat(out() + err())
                    .as("output for --catalog %s", url)
                    .contains("--catalog")
                    .doesNotContain("u1nfo-pw", "s3cr3t", "k3y", "t0k3n");
        }
    }

    @Test
    void help_printsUsage() {
        assertThat(run("--help")).isZero();
        assertThat(out()).contains("--jsonl").contains("--pg-stat-statements").contains("--catalog");
    }
}
