package io.github.hibernaterouting.routing.spring.boot.autoconfigure.monitoring;

import io.github.hibernaterouting.routing.internal.metrics.RouteReason;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A Prometheus text exposition, as Micrometer's Prometheus registry writes it: each series' metric
 * name with its labels and their values; and what in the monitoring files does not match it.
 */
public final class PrometheusScrape {
    /** Labels Prometheus adds to every series when it scrapes a target: never in the application's text. */
    static final Set<String> TARGET_LABELS = Set.of("instance", "job");

    private static final Pattern SERIES = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+\\S+.*$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern WORDS = Pattern.compile("[a-z0-9-]+(\\|[a-z0-9-]+)*");

    /** Metric name → label → the values seen. */
    private final Map<String, Map<String, Set<String>>> series = new TreeMap<>();

    private PrometheusScrape() {}

    /** Parses the text of {@code /actuator/prometheus}. */
    public static PrometheusScrape parse(String text) {
        final PrometheusScrape scrape = new PrometheusScrape();
        for (String line : text.split("\n")) {
            final Matcher m = SERIES.matcher(line.strip());
            if (line.startsWith("#") || !m.matches()) {
                continue;
            }
            final Map<String, Set<String>> labels = scrape.series.computeIfAbsent(m.group(1), k -> new TreeMap<>());
            if (m.group(3) != null) {
                final Matcher label = LABEL.matcher(m.group(3));
                while (label.find()) {
                    labels.computeIfAbsent(label.group(1), k -> new TreeSet<>()).add(label.group(2));
                }
            }
        }
        return scrape;
    }

    /** True if the scrape has a series of {@code metric}, with {@code label} equal to {@code value} if given. */
    public boolean has(String metric, String label, String value) {
        final Map<String, Set<String>> labels = series.get(metric);
        return labels != null
                && (label == null || labels.getOrDefault(label, Set.of()).contains(value));
    }

    /** The names in the scrape that start with {@code prefix}, for messages. */
    public Set<String> names(String prefix) {
        return series.keySet().stream()
                .filter(n -> n.startsWith(prefix))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * What {@code queries} name that this scrape lacks: a metric with no series, a label no series of a
     * metric of the query carries, a label value of a selector no series has (for {@code reason}, a
     * value the library never gives), an output label the query's aggregation drops. Empty when every
     * name matches.
     */
    public List<String> problems(List<MonitoringFiles.Query> queries) {
        final List<String> problems = new ArrayList<>();
        for (MonitoringFiles.Query query : queries) {
            final Set<String> metrics = MonitoringFiles.metrics(query.expr());
            if (metrics.isEmpty()) {
                problems.add(query.where() + " names no hibernate_routing_ or hikaricp_ metric: " + query.expr());
            }
            for (String metric : metrics) {
                if (!series.containsKey(metric)) {
                    problems.add(query.where() + ": metric " + metric + " is not in the application's scrape"
                            + " (it has " + names(metric.substring(0, metric.indexOf('_') + 1)) + ")");
                    continue;
                }
                for (String label : MonitoringFiles.groupingLabels(query.expr())) {
                    missingLabel(query, metric, label, problems);
                }
            }
            for (String[] pair : MonitoringFiles.labelValues(query.expr())) {
                missingLabel(query, pair[0], pair[1], problems);
            }
            for (MonitoringFiles.Selector selector : MonitoringFiles.selectors(query.expr())) {
                if (!series.containsKey(selector.metric())) {
                    continue;
                }
                missingLabel(query, selector.metric(), selector.label(), problems);
                missingValues(query, selector, problems);
            }
            final Set<String> grouped = MonitoringFiles.groupingLabels(query.expr());
            for (String label : query.outputLabels()) {
                if (!grouped.contains(label)) {
                    problems.add(query.where() + " uses label " + label + " in its text, but its aggregation"
                            + " keeps only " + grouped);
                }
            }
        }
        return problems;
    }

    private void missingLabel(MonitoringFiles.Query query, String metric, String label, List<String> problems) {
        final Map<String, Set<String>> labels = series.get(metric);
        if (labels != null && !TARGET_LABELS.contains(label) && !labels.containsKey(label)) {
            problems.add(query.where() + ": label " + label + " is not on metric " + metric + " (its labels: "
                    + labels.keySet() + ")");
        }
    }

    /** Fixed words (not Grafana variables, not regular expressions beyond {@code a|b}) must be values the meter has. */
    private void missingValues(MonitoringFiles.Query query, MonitoringFiles.Selector selector, List<String> problems) {
        if (!WORDS.matcher(selector.value()).matches()) {
            return;
        }
        final Set<String> seen = series.get(selector.metric()).getOrDefault(selector.label(), Set.of());
        for (String value : selector.value().split("\\|")) {
            final boolean known = seen.contains(value)
                    || ("reason".equals(selector.label())
                            && Arrays.stream(RouteReason.values()).anyMatch(r -> r.tag.equals(value)));
            if (!known) {
                problems.add(query.where() + ": " + selector.metric() + "{" + selector.label() + selector.op() + "\""
                        + selector.value() + "\"}: value " + value + " is not one the application gives (seen: "
                        + seen + ")");
            }
        }
    }
}
