package io.github.hibernaterouting.routing.spring.boot.autoconfigure.monitoring;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The monitoring files the project ships ({@code monitoring/} at the top of the repository), and what
 * their PromQL names: metrics, labels, label values.
 */
public final class MonitoringFiles {
    public static final String RULES = "monitoring/prometheus/hibernate-routing-alerts.yml";
    public static final String DASHBOARD = "monitoring/grafana/hibernate-routing-dashboard.json";

    private static final Pattern METRIC = Pattern.compile("\\b(?:hibernate_routing|hikaricp)_[a-z_]+\\b");
    private static final Pattern SELECTOR =
            Pattern.compile("\\b((?:hibernate_routing|hikaricp)_[a-z_]+)\\s*\\{([^}]*)}");
    private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"([^\"]*)\"");
    private static final Pattern GROUPING =
            Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");
    private static final Pattern LABEL_VALUES = Pattern.compile(
            "label_values\\(\\s*((?:hibernate_routing|hikaricp)_[a-z_]+)\\s*(?:\\{[^}]*})?\\s*,\\s*(\\w+)\\s*\\)");
    private static final Pattern TEMPLATE_LABEL = Pattern.compile("\\$labels\\.([a-zA-Z_][a-zA-Z0-9_]*)");
    private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*}}");

    private MonitoringFiles() {}

    /** One PromQL expression and where it is, for messages: {@code alert X} or {@code panel "Y"}. */
    public record Query(String where, String expr, Set<String> outputLabels) {}

    /** A label matcher of a selector: {@code metric{label op "value"}}. */
    public record Selector(String metric, String label, String op, String value) {}

    /** The repository's top directory: the module's parent, where {@code monitoring/} is. */
    public static Path root() {
        Path dir = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("monitoring"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new AssertionError("no monitoring/ directory above " + System.getProperty("basedir", "."));
        }
        return dir;
    }

    /** The rule file, parsed as YAML. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> rules() {
        return (Map<String, Object>) new Yaml().load(read(RULES));
    }

    /** The dashboard, parsed as JSON. */
    public static JsonNode dashboard() {
        return JsonMapper.builder().build().readTree(read(DASHBOARD));
    }

    private static String read(String file) {
        try {
            return Files.readString(root().resolve(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every alert's expression; its output labels are those its annotations use. */
    @SuppressWarnings("unchecked")
    public static List<Query> alertQueries() {
        final List<Query> queries = new ArrayList<>();
        for (Map<String, Object> group : (List<Map<String, Object>>) rules().get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                final Set<String> used = new LinkedHashSet<>();
                final Object annotations = rule.get("annotations");
                if (annotations instanceof Map<?, ?> map) {
                    map.values().forEach(text -> find(TEMPLATE_LABEL, String.valueOf(text), 1, used));
                }
                queries.add(new Query("alert " + rule.get("alert"), String.valueOf(rule.get("expr")), used));
            }
        }
        return queries;
    }

    /** Every panel target's expression, its output labels those of its legend, and the variables' queries. */
    public static List<Query> dashboardQueries() {
        final List<Query> queries = new ArrayList<>();
        for (JsonNode panel : dashboard().path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                final Set<String> legend = new LinkedHashSet<>();
                find(LEGEND_LABEL, target.path("legendFormat").asString(""), 1, legend);
                queries.add(new Query(
                        "panel \"" + panel.path("title").asString() + "\" "
                                + target.path("refId").asString(),
                        target.path("expr").asString(),
                        legend));
            }
        }
        for (JsonNode variable : dashboard().path("templating").path("list")) {
            final JsonNode query = variable.path("query");
            final String text = query.isObject() ? query.path("query").asString("") : query.asString("");
            if ("query".equals(variable.path("type").asString())) {
                queries.add(new Query("variable $" + variable.path("name").asString(), text, Set.of()));
            }
        }
        return queries;
    }

    /** The metric names {@code expr} names. */
    public static Set<String> metrics(String expr) {
        final Set<String> names = new LinkedHashSet<>();
        find(METRIC, expr, 0, names);
        return names;
    }

    /** The labels of {@code by}, {@code without}, {@code on}, {@code ignoring}, {@code group_left/right} clauses. */
    public static Set<String> groupingLabels(String expr) {
        final Set<String> labels = new LinkedHashSet<>();
        final Matcher m = GROUPING.matcher(expr);
        while (m.find()) {
            for (String label : m.group(1).split(",")) {
                if (!label.isBlank()) {
                    labels.add(label.strip());
                }
            }
        }
        return labels;
    }

    /** The label matchers of every selector in {@code expr}. */
    public static List<Selector> selectors(String expr) {
        final List<Selector> selectors = new ArrayList<>();
        final Matcher s = SELECTOR.matcher(expr);
        while (s.find()) {
            final Matcher m = MATCHER.matcher(s.group(2));
            while (m.find()) {
                selectors.add(new Selector(s.group(1), m.group(1), m.group(2), m.group(3)));
            }
        }
        return selectors;
    }

    /** {@code label_values(metric, label)} of a dashboard variable: metric and label. */
    public static List<String[]> labelValues(String expr) {
        final List<String[]> pairs = new ArrayList<>();
        final Matcher m = LABEL_VALUES.matcher(expr);
        while (m.find()) {
            pairs.add(new String[] {m.group(1), m.group(2)});
        }
        return pairs;
    }

    private static void find(Pattern pattern, String text, int group, Set<String> into) {
        final Matcher m = pattern.matcher(text);
        while (m.find()) {
            into.add(m.group(group));
        }
    }
}
