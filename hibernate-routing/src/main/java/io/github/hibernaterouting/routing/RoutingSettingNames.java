package io.github.hibernaterouting.routing;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;

/**
 * The names of the library's settings, the keys of {@link RoutingSettings}, and the one closest to a
 * misspelt key: for the library's own check of unknown keys, and for integrations that check their
 * properties themselves (the Spring Boot starter does).
 */
public final class RoutingSettingNames {
    /** Every key of {@link RoutingSettings}, sorted. */
    private static final Set<String> KEYS = known();

    private RoutingSettingNames() {}

    /** Every key of {@link RoutingSettings}, sorted. */
    public static Set<String> keys() {
        return KEYS;
    }

    private static Set<String> known() {
        final Set<String> keys = new TreeSet<>();
        for (Field field : RoutingSettings.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers())
                    && field.getType() == String.class
                    && !field.getName().equals("PREFIX")
                    && !field.getName().startsWith("DEFAULT_")) {
                try {
                    keys.add((String) field.get(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return Collections.unmodifiableSet(keys);
    }

    /** The known key with the smallest edit distance to {@code key} (the first in order on a tie). */
    public static String closest(String key) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String known : KEYS) {
            final int distance = distance(key, known);
            if (distance < bestDistance) {
                best = known;
                bestDistance = distance;
            }
        }
        return best;
    }

    /** Levenshtein distance, ignoring case (a key's case is a typo like any other, but a cheap one to see). */
    static int distance(String a, String b) {
        final String x = a.toLowerCase(java.util.Locale.ROOT);
        final String y = b.toLowerCase(java.util.Locale.ROOT);
        int[] previous = new int[y.length() + 1];
        int[] current = new int[y.length() + 1];
        for (int j = 0; j <= y.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= x.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= y.length(); j++) {
                final int substitution = previous[j - 1] + (x.charAt(i - 1) == y.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            final int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[y.length()];
    }
}
