package io.github.hibernaterouting.audit;

import io.github.hibernaterouting.routing.sql.SqlScripts;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads the statements to audit: {@code .sql} scripts split as psql does ({@link SqlScripts}),
 * JSON Lines with an {@code sql} member, and CSV exports of {@code pg_stat_statements} with their
 * call counts. Input the user must fix raises an {@link InputException} naming the file and line.
 */
final class AuditInputs {

    private AuditInputs() {}

    /** The statements of every input named in {@code o}: the .sql files, then JSON Lines, then CSV. */
    static List<AuditStatement> read(AuditOptions o) throws IOException {
        List<AuditStatement> statements = new ArrayList<>();
        for (String f : o.sqlFiles) {
            readSqlScript(f, statements);
        }
        for (String f : o.jsonlFiles) {
            readJsonl(f, statements);
        }
        for (String f : o.csvFiles) {
            readCsv(f, statements);
        }
        return statements;
    }

    /** Each statement of the script, numbered {@code FILE:N}. */
    private static void readSqlScript(String file, List<AuditStatement> statements) throws IOException {
        List<String> parts = SqlScripts.split(Files.readString(Paths.get(file), StandardCharsets.UTF_8));
        for (int k = 0; k < parts.size(); k++) {
            statements.add(new AuditStatement(file + ":" + (k + 1), parts.get(k), 1));
        }
    }

    private static void readJsonl(String file, List<AuditStatement> statements) throws IOException {
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
                    throw new InputException(
                            file + ":" + lineNo + ": not a JSON object (" + e.getMessage()
                                    + "); --jsonl expects one {\"id\": ..., \"sql\": \"...\"} per line",
                            false);
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

    private static void readCsv(String file, List<AuditStatement> statements) throws IOException {
        List<List<String>> records;
        try {
            records = CsvReader.parse(Files.readString(Paths.get(file), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new InputException(file + ": " + e.getMessage(), false);
        }
        if (records.isEmpty()) {
            throw new InputException(
                    "--pg-stat-statements " + file + ": empty file; expected a header with query,calls", true);
        }
        List<String> header = records.get(0);
        int q = indexOf(header, "query");
        int c = indexOf(header, "calls");
        if (q < 0 || c < 0) {
            throw new InputException(
                    "--pg-stat-statements " + file + ": header " + header + " lacks "
                            + (q < 0 ? "query" : "calls") + "; export with e.g. \\copy (select query, calls from "
                            + "pg_stat_statements) to 'FILE.csv' csv header",
                    true);
        }
        for (int r = 1; r < records.size(); r++) {
            List<String> rec = records.get(r);
            if (rec.size() <= Math.max(q, c)) {
                throw new InputException(
                        file + ": row " + r + " has " + rec.size() + " fields, header has " + header.size(), false);
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
