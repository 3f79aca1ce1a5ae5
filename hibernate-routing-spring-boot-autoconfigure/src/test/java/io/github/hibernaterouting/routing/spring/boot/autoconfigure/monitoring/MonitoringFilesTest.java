package io.github.hibernaterouting.routing.spring.boot.autoconfigure.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * The shipped Prometheus rules and Grafana dashboard are well-formed, and the checker that holds them
 * against a live scrape ({@code MonitoringFilesIT}) finds what it must.
 */
class MonitoringFilesTest {
    /** Prometheus' duration syntax (model.ParseDuration): units largest first, each at most once. */
    private static final Pattern DURATION =
            Pattern.compile("^(\\d+y)?(\\d+w)?(\\d+d)?(\\d+h)?(\\d+m)?(\\d+s)?(\\d+ms)?$");

    private static final Set<String> RULE_KEYS =
            Set.of("alert", "expr", "for", "keep_firing_for", "labels", "annotations");

    @Test
    @SuppressWarnings("unchecked")
    void ruleFile_isAPrometheusRuleFile() {
        final Map<String, Object> rules = MonitoringFiles.rules();
        assertThat(rules).containsOnlyKeys("groups");
        final List<Map<String, Object>> groups = (List<Map<String, Object>>) rules.get("groups");
        assertThat(groups).isNotEmpty();
        final Set<String> groupNames = new HashSet<>();
        final Set<String> alerts = new HashSet<>();
        for (Map<String, Object> group : groups) {
            assertThat(group).containsOnlyKeys("name", "rules");
            assertThat(groupNames.add((String) group.get("name")))
                    .as("group names are unique")
                    .isTrue();
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                final String alert = (String) rule.get("alert");
                assertThat(alert).as("alert of %s", rule).matches("[a-zA-Z_][a-zA-Z0-9_]*");
                assertThat(alerts.add(alert)).as("alert %s is unique", alert).isTrue();
                assertThat(RULE_KEYS).as("keys of alert %s", alert).containsAll(rule.keySet());
                assertThat(rule.get("expr")).as("expr of %s", alert).isInstanceOf(String.class);
                assertThat(balanced((String) rule.get("expr")))
                        .as("brackets of %s", alert)
                        .isTrue();
                if (rule.containsKey("for")) {
                    assertThat(String.valueOf(rule.get("for")))
                            .as("for of %s", alert)
                            .matches(DURATION)
                            .isNotEmpty();
                }
                final Map<String, Object> labels = (Map<String, Object>) rule.get("labels");
                assertThat(labels.get("severity")).as("severity of %s", alert).isIn("critical", "warning", "info");
                final Map<String, Object> annotations = (Map<String, Object>) rule.get("annotations");
                assertThat(annotations).as("annotations of %s", alert).containsKeys("summary", "description");
                annotations
                        .values()
                        .forEach(text -> assertThat(templatesClosed(String.valueOf(text)))
                                .as("templates in %s: %s", alert, text)
                                .isTrue());
            }
        }
    }

    @Test
    void dashboard_isAGrafanaDashboard_onADataSourceVariable() {
        final JsonNode dashboard = MonitoringFiles.dashboard();
        assertThat(dashboard.path("uid").asString()).isNotBlank();
        assertThat(dashboard.path("title").asString()).isNotBlank();
        assertThat(dashboard.path("schemaVersion").asInt()).isPositive();
        final List<String> dataSources = new ArrayList<>();
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if ("datasource".equals(variable.path("type").asString())) {
                assertThat(variable.path("query").asString()).isEqualTo("prometheus");
                dataSources.add(variable.path("name").asString());
            }
        }
        assertThat(dataSources).containsExactly("datasource");
        final Set<Integer> ids = new HashSet<>();
        int targets = 0;
        for (JsonNode panel : dashboard.path("panels")) {
            final String title = panel.path("title").asString();
            assertThat(ids.add(panel.path("id").asInt()))
                    .as("id of %s is unique", title)
                    .isTrue();
            assertThat(panel.path("gridPos").path("w").asInt())
                    .as("width of %s", title)
                    .isBetween(1, 24);
            if ("row".equals(panel.path("type").asString())) {
                continue;
            }
            assertThat(panel.path("datasource").path("uid").asString())
                    .as("data source of %s", title)
                    .isEqualTo("${datasource}");
            assertThat(panel.path("targets")).as("targets of %s", title).isNotEmpty();
            for (JsonNode target : panel.path("targets")) {
                assertThat(target.path("datasource").path("uid").asString()).isEqualTo("${datasource}");
                assertThat(target.path("refId").asString()).isNotBlank();
                assertThat(balanced(target.path("expr").asString()))
                        .as("brackets in %s", title)
                        .isTrue();
                targets++;
            }
        }
        assertThat(targets).isGreaterThan(10);
    }

    @Test
    void queries_nameTheMetricsLabelsAndValuesTheyUse() {
        final String expr = "sum by (persistence_unit, reason) (rate(hibernate_routing_fallbacks_total"
                + "{instance=~\"$instance\", reason=\"lag-bound\"}[5m])) / on (persistence_unit) hikaricp_connections_max";
        assertThat(MonitoringFiles.metrics(expr))
                .containsExactly("hibernate_routing_fallbacks_total", "hikaricp_connections_max");
        assertThat(MonitoringFiles.groupingLabels(expr)).containsExactly("persistence_unit", "reason");
        assertThat(MonitoringFiles.selectors(expr))
                .containsExactly(
                        new MonitoringFiles.Selector(
                                "hibernate_routing_fallbacks_total", "instance", "=~", "$instance"),
                        new MonitoringFiles.Selector("hibernate_routing_fallbacks_total", "reason", "=", "lag-bound"));
        assertThat(MonitoringFiles.labelValues("label_values(hibernate_routing_statements_total{a=\"b\"}, node)"))
                .containsExactly(new String[] {"hibernate_routing_statements_total", "node"});
    }

    @Test
    void scrapeCheck_namesAMetricALabelAndAValueTheScrapeLacks() {
        final PrometheusScrape scrape = PrometheusScrape.parse(String.join(
                "\n",
                "# HELP hibernate_routing_fallbacks_total Reads",
                "# TYPE hibernate_routing_fallbacks_total counter",
                "hibernate_routing_fallbacks_total{persistence_unit=\"default\",reason=\"lsn-fallback\"} 2.0",
                "hibernate_routing_replica_up{node=\"replica1\",persistence_unit=\"default\"} 1.0",
                ""));
        final List<String> problems = scrape.problems(List.of(
                new MonitoringFiles.Query(
                        "alert Good",
                        "sum by (instance, reason) (rate(hibernate_routing_fallbacks_total{reason=\"lag-bound\"}[5m]))",
                        Set.of("reason")),
                new MonitoringFiles.Query("alert Misspelt", "hibernate_routing_fallback_total > 0", Set.of()),
                new MonitoringFiles.Query(
                        "alert NoSuchLabel", "max by (pool) (hibernate_routing_replica_up) == 0", Set.of()),
                new MonitoringFiles.Query(
                        "alert NoSuchValue", "hibernate_routing_replica_up{node=\"replica9\"} == 0", Set.of()),
                new MonitoringFiles.Query(
                        "alert DroppedLabel", "sum(hibernate_routing_replica_up) == 0", Set.of("node"))));
        assertThat(problems).hasSize(4);
        assertThat(problems.get(0)).startsWith("alert Misspelt: metric hibernate_routing_fallback_total is not in");
        assertThat(problems.get(1))
                .startsWith("alert NoSuchLabel: label pool is not on metric hibernate_routing_replica_up");
        assertThat(problems.get(2)).contains("alert NoSuchValue", "value replica9");
        assertThat(problems.get(3)).startsWith("alert DroppedLabel uses label node");
    }

    private static boolean balanced(String text) {
        int depth = 0;
        final StringBuilder open = new StringBuilder();
        boolean quoted = false;
        for (char c : text.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            } else if (!quoted && "([{".indexOf(c) >= 0) {
                open.append(c);
                depth++;
            } else if (!quoted && ")]}".indexOf(c) >= 0) {
                if (depth == 0 || "([{".indexOf(open.charAt(depth - 1)) != ")]}".indexOf(c)) {
                    return false;
                }
                open.setLength(--depth);
            }
        }
        return depth == 0 && !quoted;
    }

    private static boolean templatesClosed(String text) {
        return text.split("\\{\\{", -1).length == text.split("}}", -1).length;
    }
}
