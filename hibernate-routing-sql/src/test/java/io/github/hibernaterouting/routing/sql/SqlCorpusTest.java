package io.github.hibernaterouting.routing.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Checks the classifier against the labelled corpus of PostgreSQL regression-suite statements in
 * {@code sql-corpus/dev.jsonl} in the directory that holds the checkout, when there is one (override with
 * {@code -Dsql.corpus=FILE}). The corpus is not part of the project; without it the test is skipped.
 */
class SqlCorpusTest {

    private static final String DEFAULT_LOCATION = "../../shared/sql-corpus/dev.jsonl";

    private static List<Map<String, String>> corpus;

    @BeforeAll
    static void readCorpus() throws IOException {
        Path file = Paths.get(System.getProperty("sql.corpus", DEFAULT_LOCATION))
                .toAbsolutePath()
                .normalize();
        Assumptions.assumeTrue(
                Files.isReadable(file),
                "SQL corpus not found at " + file + " (set -Dsql.corpus=FILE); skipping the corpus checks");
        corpus = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                corpus.add(MiniJson.parseFlatObject(line));
            }
        }
    }

    @Test
    void noPrimaryRequiredStatementIsSentToAReplica() {
        SqlClassifier classifier = new SqlClassifier(FunctionCatalog.NONE, 0);
        List<String> offenders = new ArrayList<>();
        for (Map<String, String> row : corpus) {
            if ("primary_required".equals(row.get("label"))
                    && classifier.classify(row.get("sql")).replicaSafe()) {
                offenders.add(row.get("id"));
            }
        }
        assertThat(offenders)
                .as("primary_required statements classified replica-safe")
                .isEmpty();
    }

    @Test
    void atLeastNinetyPercentOfReplicaOkStatementsAreOffloadedWithoutACatalog() {
        SqlClassifier classifier = new SqlClassifier(FunctionCatalog.NONE, 0);
        int total = 0;
        int offloaded = 0;
        Map<String, Integer> missedBy = new TreeMap<>();
        Map<String, String> example = new LinkedHashMap<>();
        for (Map<String, String> row : corpus) {
            if (!"replica_ok".equals(row.get("label"))) {
                continue;
            }
            total++;
            Classification c = classifier.classify(row.get("sql"));
            if (c.replicaSafe()) {
                offloaded++;
            } else {
                String key = c.reason() + (c.detail() == null ? "" : " " + c.detail());
                missedBy.merge(key, 1, Integer::sum);
                example.putIfAbsent(key, row.get("id"));
            }
        }
        double share = 100.0 * offloaded / total;
        System.out.printf("corpus: %d of %d replica_ok statements offloaded (%.2f%%)%n", offloaded, total, share);
        if (Boolean.getBoolean("sql.corpus.verbose")) {
            missedBy.entrySet().stream()
                    .sorted((a, b) -> b.getValue() - a.getValue())
                    .forEach(e -> System.out.printf(
                            "  missed %4d  %-50s e.g. %s%n", e.getValue(), e.getKey(), example.get(e.getKey())));
        }
        assertThat(share).as("replica_ok offloaded, %").isGreaterThanOrEqualTo(90.0);
    }
}
