package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.hibernate.cfg.Environment;

/**
 * The {@code hibernate.routing.*} keys the library knows, those of {@link RoutingSettings}; any other
 * key with the prefix fails the bootstrap, naming the closest known key. A misspelled
 * {@code replica_urls} would otherwise switch routing off without a word, and any other misspelling
 * would leave its default in place.
 *
 * <p>Keys from Hibernate's global properties are not checked: Hibernate copies every JVM system
 * property (and {@code hibernate.properties}) into the settings of each persistence unit, and tools
 * use the prefix for system properties of their own (the test kit, the sample's tests).
 */
final class SettingKeys {
    /** Every key of {@link RoutingSettings}, sorted. */
    static final Set<String> KNOWN = known();

    private SettingKeys() {}

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
        return Set.copyOf(keys);
    }

    /**
     * @throws RoutingConfigurationException naming the first unknown {@code hibernate.routing.*} key and
     *     the known key closest to it
     */
    static void requireKnown(Map<String, ?> settings) {
        for (String key : new TreeSet<>(settings.keySet())) {
            if (key.startsWith(RoutingSettings.PREFIX) && !KNOWN.contains(key) && !global(key, settings.get(key))) {
                throw RoutingConfigurationException.withMessage(
                        key,
                        "Unknown setting '" + key + "': hibernate-routing has no such setting; did you mean '"
                                + closest(key) + "'? Every setting is a constant of " + RoutingSettings.class.getName()
                                + " and is listed in docs/configuration.md");
            }
        }
    }

    /** Whether the key is a JVM system property, or Hibernate copied it from its global properties with this value. */
    private static boolean global(String key, Object value) {
        if (System.getProperties().containsKey(key)) {
            return true;
        }
        final Object global = Environment.getProperties().get(key);
        return global != null && value != null && global.toString().equals(value.toString());
    }

    /** The known key with the smallest edit distance to {@code key} (the first in order on a tie). */
    static String closest(String key) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String known : new TreeSet<>(KNOWN)) {
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
