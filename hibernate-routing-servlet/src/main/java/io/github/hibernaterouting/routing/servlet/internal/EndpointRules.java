package io.github.hibernaterouting.routing.servlet.internal;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.Strategy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Per-endpoint strategies for safe requests, such as {@code GET /auth/**=PRIMARY, /reports/*=STALE_READ}.
 *
 * <p>A rule is {@code [METHOD] /path/pattern=STRATEGY}; rules are separated by commas or line
 * breaks and tried in order, the first match wins. In a pattern, {@code *} matches exactly one path
 * segment and {@code **} any number of segments (also none); other segments match literally. Paths
 * are the request's path inside the application (without the context path). Immutable and
 * thread-safe.
 */
public final class EndpointRules {
    /** The methods a rule may name: the safe ones. Rules cannot change mutations, which always use the primary. */
    public static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE", "QUERY");

    static final String FORM = "Expected rules of the form '[METHOD] /path/pattern=STRATEGY', separated by commas, "
            + "for example 'GET /auth/**=PRIMARY, /reports/*=STALE_READ': METHOD (optional) is one of GET, HEAD, OPTIONS, "
            + "TRACE, QUERY; in the pattern '*' matches one path segment and '**' any number of segments; STRATEGY is one of "
            + "READ_AFTER_WRITE, STALE_READ, PRIMARY, REPLICA.";

    private static final EndpointRules NONE = new EndpointRules(List.of());

    private record Rule(String method, String[] segments, Strategy strategy) {}

    private final List<Rule> rules;

    private EndpointRules(List<Rule> rules) {
        this.rules = rules;
    }

    /** No rules. */
    public static EndpointRules none() {
        return NONE;
    }

    /**
     * Reads rules.
     *
     * @param text the rules; {@code null} or blank means none
     * @throws IllegalArgumentException naming the first bad rule and the expected form
     */
    public static EndpointRules parse(String text) {
        if (text == null || text.isBlank()) {
            return NONE;
        }
        final List<Rule> rules = new ArrayList<>();
        for (String entry : text.split("[,\\n\\r]")) {
            if (!entry.isBlank()) {
                rules.add(parseRule(entry.trim()));
            }
        }
        return new EndpointRules(List.copyOf(rules));
    }

    private static Rule parseRule(String rule) {
        final int equals = rule.indexOf('=');
        if (equals < 0 || rule.indexOf('=', equals + 1) >= 0) {
            throw invalid(rule, "it needs exactly one '=' between the endpoint and the strategy");
        }
        final String[] endpoint = rule.substring(0, equals).trim().split("\\s+");
        final String value = rule.substring(equals + 1).trim();
        final String method;
        final String pattern;
        if (endpoint.length == 1) {
            method = null;
            pattern = endpoint[0];
        } else if (endpoint.length == 2) {
            method = endpoint[0];
            pattern = endpoint[1];
            if (!SAFE_METHODS.contains(method)) {
                throw invalid(
                        rule,
                        "'" + method + "' is not a safe method in upper case (GET, HEAD, OPTIONS, TRACE, QUERY); "
                                + "mutations (POST, PUT, PATCH, DELETE, ...) always run on the primary and cannot have rules");
            }
        } else {
            throw invalid(rule, "the endpoint must be '[METHOD] /path/pattern'");
        }
        if (!pattern.startsWith("/")) {
            throw invalid(rule, "the path pattern must start with '/'");
        }
        final String[] segments = segments(pattern);
        for (String segment : segments) {
            if (segment.isEmpty()) {
                throw invalid(rule, "the path pattern has an empty segment ('//')");
            }
            if (segment.contains("*") && !segment.equals("*") && !segment.equals("**")) {
                throw invalid(
                        rule, "'" + segment + "' mixes '*' with other characters; a wildcard must be a whole segment");
            }
            if (segment.contains("?") || segment.contains("#")) {
                throw invalid(rule, "the path pattern must not contain a query or fragment");
            }
        }
        if (value.isEmpty()) {
            throw invalid(rule, "the strategy is missing");
        }
        final Strategy strategy;
        try {
            strategy = Strategy.interpret(value, "rules");
        } catch (RoutingConfigurationException e) {
            throw invalid(rule, "'" + value + "' is not a strategy");
        }
        return new Rule(method, segments, strategy);
    }

    private static IllegalArgumentException invalid(String rule, String what) {
        return new IllegalArgumentException("Invalid routing rule '" + rule + "': " + what + ". " + FORM);
    }

    /** The path's segments: {@code "/"} has none, a trailing slash adds none. */
    private static String[] segments(String path) {
        final String trimmed = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        return trimmed.equals("/") || trimmed.isEmpty()
                ? new String[0]
                : trimmed.substring(1).split("/", -1);
    }

    /** Whether there are no rules. */
    public boolean isEmpty() {
        return rules.isEmpty();
    }

    /**
     * The strategy of the first rule that matches, or {@code null}.
     *
     * @param method the request method
     * @param path the path inside the application, starting with {@code /}
     */
    public Strategy match(String method, String path) {
        if (rules.isEmpty()) {
            return null;
        }
        final String[] segments = segments(path);
        for (Rule rule : rules) {
            if ((rule.method == null || rule.method.equals(method)) && matches(rule.segments, 0, segments, 0)) {
                return rule.strategy;
            }
        }
        return null;
    }

    private static boolean matches(String[] pattern, int p, String[] path, int s) {
        while (p < pattern.length) {
            final String segment = pattern[p];
            if (segment.equals("**")) {
                for (int rest = s; rest <= path.length; rest++) {
                    if (matches(pattern, p + 1, path, rest)) {
                        return true;
                    }
                }
                return false;
            }
            if (s == path.length || !(segment.equals("*") ? !path[s].isEmpty() : segment.equals(path[s]))) {
                return false;
            }
            p++;
            s++;
        }
        return s == path.length;
    }
}
