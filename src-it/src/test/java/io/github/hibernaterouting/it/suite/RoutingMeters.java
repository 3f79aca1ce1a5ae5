package io.github.hibernaterouting.it.suite;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the routing library's counters in each sample process counted during a load: its
 * {@code /metrics} page (Prometheus text) read before and after, and the difference per series
 * ({@code hibernate_routing_statements_total{target,node,reason}},
 * {@code hibernate_routing_fallbacks_total{reason}}, …). The counters count statements and units
 * of work, not requests: a request runs several statements (the API key lookup, its reads, the
 * {@code X-Served-By} probe). Thread-safe.
 */
final class RoutingMeters {
    private static final Pattern COUNTER =
            Pattern.compile("(?m)^(hibernate_routing_\\w+_total)\\{([^}]*)\\}\\s+(\\S+)$");
    private static final Pattern TAG = Pattern.compile("(\\w+)=\"([^\"]*)\"");

    /** Per process: series → value before the load. */
    private final Map<String, Map<String, Double>> before = new LinkedHashMap<>();
    /** Series → process → what it counted during the load. */
    private final Map<String, Map<String, Long>> deltas = new TreeMap<>();

    private final List<String> instances = new ArrayList<>();
    private final List<String> unreadable = new ArrayList<>();

    synchronized void before(String instance, String page) {
        before.put(instance, parse(page));
    }

    synchronized void after(String instance, String page) {
        final Map<String, Double> start = before.get(instance);
        if (start == null) {
            unreadable.add(instance + ": no reading before the load");
            return;
        }
        instances.add(instance);
        parse(page).forEach((series, value) -> {
            final long delta = Math.round(value - start.getOrDefault(series, 0.0));
            if (delta != 0) {
                deltas.computeIfAbsent(series, s -> new TreeMap<>()).put(instance, delta);
            }
        });
    }

    synchronized void unreadable(String instance, String why) {
        unreadable.add(instance + ": " + why);
    }

    /** The processes whose page could not be read, with why; empty if both readings of every process were taken. */
    synchronized List<String> errors() {
        return List.copyOf(unreadable);
    }

    /**
     * The sum over the processes of what the series of {@code meter} with {@code tag="value"} counted during the load
     * (every series of {@code meter} if {@code tag} is {@code null}).
     */
    synchronized long total(String meter, String tag, String value) {
        return deltas.entrySet().stream()
                .filter(e -> e.getKey().startsWith(meter + "{")
                        && (tag == null || e.getKey().contains(tag + "=\"" + value + "\"")))
                .mapToLong(e -> e.getValue().values().stream()
                        .mapToLong(Long::longValue)
                        .sum())
                .sum();
    }

    /** The counts of the load, one row per series (meter and tags), one column per process, and their sum. */
    synchronized String markdown() {
        final StringBuilder md = new StringBuilder(
                "\n## Routing meters during the load (per process, from /metrics; statements, not requests)\n\n");
        md.append("| meter | tags |");
        instances.forEach(i -> md.append(' ').append(i).append(" |"));
        md.append(" total |\n|---|---|");
        instances.forEach(i -> md.append("---:|"));
        md.append("---:|\n");
        deltas.forEach((series, byInstance) -> {
            final int brace = series.indexOf('{');
            md.append("| ")
                    .append(series, 0, brace)
                    .append(" | ")
                    .append(series, brace + 1, series.length() - 1)
                    .append(" |");
            instances.forEach(
                    i -> md.append(' ').append(byInstance.getOrDefault(i, 0L)).append(" |"));
            md.append(' ')
                    .append(byInstance.values().stream()
                            .mapToLong(Long::longValue)
                            .sum())
                    .append(" |\n");
        });
        unreadable.forEach(u -> md.append("\nNot read: ").append(u).append('\n'));
        return md.toString();
    }

    /**
     * Series → value of the library's counters on a page; a series is the meter and its tags but
     * {@code persistence_unit} (the sample has one), in a stable order.
     */
    static Map<String, Double> parse(String page) {
        final Map<String, Double> values = new LinkedHashMap<>();
        final Matcher m = COUNTER.matcher(page);
        while (m.find()) {
            final TreeSet<String> tags = new TreeSet<>();
            final Matcher t = TAG.matcher(m.group(2));
            while (t.find()) {
                if (!t.group(1).equals("persistence_unit")) {
                    tags.add(t.group(1) + "=\"" + t.group(2) + "\"");
                }
            }
            values.merge(m.group(1) + "{" + String.join(",", tags) + "}", Double.parseDouble(m.group(3)), Double::sum);
        }
        return values;
    }
}
