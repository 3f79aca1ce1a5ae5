package io.github.hibernaterouting.it.suite;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one run of the replica suite found, written as {@code report.json} and {@code report.md}:
 * the tested revision, source fingerprints, server versions, each check with its outcome, timing
 * and the node that served each checked read, and the run's log files (copied next to the report).
 *
 * <p>Status: {@code PASSED} only when the setup worked and every check passed; {@code FAILED}
 * otherwise, with the setup error or the failed checks in the report.
 */
final class SuiteReport {
    /** One HTTP exchange a check looked at. */
    record Exchange(
            String label, String process, String method, String path, int status, String servedBy, long millis) {}

    /** One check: a numbered property of the brief. */
    static final class Check {
        final String id;
        final String title;
        final List<Exchange> exchanges = new ArrayList<>();
        final List<String> notes = new ArrayList<>();
        boolean passed;
        boolean ran;
        long millis;
        String failure;

        Check(String id, String title) {
            this.id = id;
            this.title = title;
        }

        void note(String note) {
            notes.add(note);
        }
    }

    final Instant started = Instant.now();
    final Map<String, String> environment = new LinkedHashMap<>();
    final Map<String, String> revision = new LinkedHashMap<>();
    final Map<String, String> fingerprints = new LinkedHashMap<>();
    final Map<String, String> versions = new LinkedHashMap<>();
    final Map<String, String> servers = new LinkedHashMap<>();
    final List<Check> checks = new ArrayList<>();
    final List<String> logs = new ArrayList<>();
    final List<String> teardownProblems = new ArrayList<>();
    String setupError;
    String setupPhase;
    long setupMillis;
    long totalMillis;

    Check check(String id, String title) {
        final Check check = new Check(id, title);
        checks.add(check);
        return check;
    }

    boolean passed() {
        return setupError == null && !checks.isEmpty() && checks.stream().allMatch(c -> c.ran && c.passed);
    }

    String status() {
        return passed() ? "PASSED" : "FAILED";
    }

    List<String> failedChecks() {
        return checks.stream()
                .filter(c -> !c.ran || !c.passed)
                .map(c -> c.id + " " + c.title + ": " + (c.ran ? c.failure : "not run"))
                .toList();
    }

    /** The stack trace, with at most {@code frames} "at" lines per exception (causes keep their headers). */
    static String stackTrace(Throwable t, int frames) {
        final StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        final StringBuilder kept = new StringBuilder();
        int atLines = 0;
        for (String line : out.toString().split("\n")) {
            if (line.trim().startsWith("at ")) {
                if (++atLines > frames) {
                    continue;
                }
            } else {
                atLines = 0;
            }
            kept.append(line.stripTrailing()).append('\n');
        }
        return kept.toString().stripTrailing();
    }

    /** Writes {@code report.json} and {@code report.md} into {@code dir}. */
    void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("report.json"), json(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("report.md"), markdown(), StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- JSON

    String json() {
        final Json j = new Json();
        j.open('{');
        j.field("suite", "replica suite (two application processes)");
        j.field("status", status());
        j.field("started", started.toString());
        j.field("totalMillis", totalMillis);
        j.field("setupMillis", setupMillis);
        j.field("setupError", setupError);
        j.field("setupPhase", setupPhase);
        j.map("revision", revision);
        j.map("fingerprints", fingerprints);
        j.map("versions", versions);
        j.map("servers", servers);
        j.map("environment", environment);
        j.key("checks");
        j.open('[');
        for (Check c : checks) {
            j.open('{');
            j.field("id", c.id);
            j.field("title", c.title);
            j.field("result", !c.ran ? "NOT_RUN" : c.passed ? "PASS" : "FAIL");
            j.field("millis", c.millis);
            j.field("failure", c.failure);
            j.list("notes", c.notes);
            j.key("reads");
            j.open('[');
            for (Exchange e : c.exchanges) {
                j.open('{');
                j.field("label", e.label());
                j.field("process", e.process());
                j.field("request", e.method() + " " + e.path());
                j.field("status", e.status());
                j.field("servedBy", e.servedBy());
                j.field("millis", e.millis());
                j.close('}');
            }
            j.close(']');
            j.close('}');
        }
        j.close(']');
        j.list("logs", logs);
        j.list("teardownProblems", teardownProblems);
        j.close('}');
        return j.toString() + "\n";
    }

    /** A minimal JSON writer: objects, arrays, strings, numbers, null. */
    private static final class Json {
        private final StringBuilder out = new StringBuilder();
        private final List<Boolean> first = new ArrayList<>();
        private boolean afterKey;

        void open(char bracket) {
            comma();
            out.append(bracket);
            first.add(true);
        }

        void close(char bracket) {
            first.remove(first.size() - 1);
            out.append(bracket);
        }

        void key(String key) {
            comma();
            out.append(quote(key)).append(':');
            afterKey = true;
        }

        void field(String key, Object value) {
            key(key);
            value(value);
        }

        void value(Object value) {
            comma();
            if (value == null) {
                out.append("null");
            } else if (value instanceof Number || value instanceof Boolean) {
                out.append(value);
            } else {
                out.append(quote(value.toString()));
            }
        }

        void map(String key, Map<String, String> values) {
            key(key);
            open('{');
            values.forEach(this::field);
            close('}');
        }

        void list(String key, Collection<String> values) {
            key(key);
            open('[');
            values.forEach(this::value);
            close(']');
        }

        private void comma() {
            if (afterKey) {
                afterKey = false;
                return;
            }
            if (!first.isEmpty()) {
                final int last = first.size() - 1;
                if (first.get(last)) {
                    first.set(last, false);
                } else {
                    out.append(',');
                }
                out.append('\n').append("  ".repeat(first.size()));
            }
        }

        static String quote(String s) {
            final StringBuilder q = new StringBuilder("\"");
            for (char ch : s.toCharArray()) {
                switch (ch) {
                    case '"' -> q.append("\\\"");
                    case '\\' -> q.append("\\\\");
                    case '\n' -> q.append("\\n");
                    case '\r' -> q.append("\\r");
                    case '\t' -> q.append("\\t");
                    default -> {
                        if (ch < 0x20) {
                            q.append(String.format("\\u%04x", (int) ch));
                        } else {
                            q.append(ch);
                        }
                    }
                }
            }
            return q.append('"').toString();
        }

        @Override
        public String toString() {
            return out.toString();
        }
    }

    // ---------------------------------------------------------------- Markdown

    String markdown() {
        final StringBuilder md = new StringBuilder();
        md.append("# Replica suite: ").append(status()).append("\n\n");
        md.append(
                "Two sample application processes (A, B) on a PostgreSQL primary, two streaming standbys and Redis.\n\n");
        md.append("- Started: ")
                .append(started)
                .append(", total ")
                .append(totalMillis)
                .append(" ms (setup ")
                .append(setupMillis)
                .append(" ms)\n");
        final long passed = checks.stream().filter(c -> c.ran && c.passed).count();
        md.append("- Checks: ")
                .append(passed)
                .append(" passed of ")
                .append(checks.size())
                .append("\n");
        if (setupError != null) {
            md.append("\n## Setup error\n\nPhase: `")
                    .append(setupPhase)
                    .append("`\n\n```text\n")
                    .append(setupError)
                    .append("\n```\n");
        }
        section(md, "Tested revision", revision);
        section(md, "Source fingerprints (SHA-256 over sorted relative paths and contents)", fingerprints);
        section(md, "Server versions", versions);
        section(md, "Servers", servers);
        section(md, "Environment", environment);
        md.append("\n## Checks\n\n| # | Check | Result | ms | Reads served by |\n|---|---|---|---|---|\n");
        for (Check c : checks) {
            final Map<String, Integer> byNode = new LinkedHashMap<>();
            c.exchanges.forEach(e -> byNode.merge(e.servedBy() == null ? "-" : e.servedBy(), 1, Integer::sum));
            md.append("| ")
                    .append(c.id)
                    .append(" | ")
                    .append(c.title)
                    .append(" | ")
                    .append(!c.ran ? "NOT RUN" : c.passed ? "PASS" : "**FAIL**")
                    .append(" | ")
                    .append(c.millis)
                    .append(" | ")
                    .append(byNode)
                    .append(" |\n");
        }
        for (Check c : checks) {
            md.append("\n### ")
                    .append(c.id)
                    .append(". ")
                    .append(c.title)
                    .append(" — ")
                    .append(!c.ran ? "NOT RUN" : c.passed ? "PASS" : "FAIL")
                    .append(" (")
                    .append(c.millis)
                    .append(" ms)\n\n");
            if (c.failure != null) {
                md.append("```text\n").append(c.failure).append("\n```\n\n");
            }
            c.notes.forEach(n -> md.append("- ").append(n).append("\n"));
            if (!c.exchanges.isEmpty()) {
                md.append("\n| Label | Process | Request | Status | Served by | ms |\n|---|---|---|---|---|---|\n");
                for (Exchange e : c.exchanges) {
                    md.append("| ")
                            .append(e.label())
                            .append(" | ")
                            .append(e.process())
                            .append(" | `")
                            .append(e.method())
                            .append(' ')
                            .append(e.path())
                            .append("` | ")
                            .append(e.status())
                            .append(" | ")
                            .append(e.servedBy() == null ? "-" : e.servedBy())
                            .append(" | ")
                            .append(e.millis())
                            .append(" |\n");
                }
            }
        }
        md.append("\n## Logs\n\n");
        if (logs.isEmpty()) {
            md.append("None were written.\n");
        }
        logs.forEach(l -> md.append("- `").append(l).append("`\n"));
        if (!teardownProblems.isEmpty()) {
            md.append("\n## Teardown problems\n\n");
            teardownProblems.forEach(p -> md.append("- ").append(p).append("\n"));
        }
        return md.toString();
    }

    private static void section(StringBuilder md, String title, Map<String, String> values) {
        md.append("\n## ").append(title).append("\n\n");
        if (values.isEmpty()) {
            md.append("(not collected)\n");
        }
        values.forEach(
                (k, v) -> md.append("- ").append(k).append(": `").append(v).append("`\n"));
    }
}
