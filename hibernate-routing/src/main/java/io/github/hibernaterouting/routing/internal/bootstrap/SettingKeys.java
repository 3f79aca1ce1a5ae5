package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettingNames;
import io.github.hibernaterouting.routing.RoutingSettings;
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
    static final Set<String> KNOWN = RoutingSettingNames.keys();

    private SettingKeys() {}

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
                                + RoutingSettingNames.closest(key) + "'? Every setting is a constant of "
                                + RoutingSettings.class.getName() + " and is listed in docs/configuration.md");
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
}
