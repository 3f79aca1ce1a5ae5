package io.github.hibernaterouting.benchmarks.workload;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The command line of the workload programs: {@code --name value} pairs and {@code --name}
 * switches (stored as {@code "true"}), by name in the order given; a word that is neither an
 * option nor its value is an error.
 */
final class Options {
    private Options() {}

    static Map<String, String> parse(String[] args) {
        final Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + args[i]);
            }
            final String key = args[i].substring(2);
            if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                options.put(key, args[++i]);
            } else {
                options.put(key, "true");
            }
        }
        return options;
    }
}
