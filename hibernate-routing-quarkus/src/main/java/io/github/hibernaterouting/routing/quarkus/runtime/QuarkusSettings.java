package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettingNames;
import io.github.hibernaterouting.routing.RoutingSettings;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The library's settings from {@link HibernateRoutingConfig}, keyed as in {@link RoutingSettings}.
 *
 * <p>Under {@code quarkus.hibernate-routing.settings.} a setting is named as after {@code hibernate.routing.},
 * with dashes, underscores or dots ({@code max-replica-lag}, {@code max_replica_lag}). A name that is no setting
 * of the library fails the start, naming the key and the closest setting; so do the settings the extension sets
 * itself and the pool settings of a primary the library does not build.
 */
final class QuarkusSettings {
    static final String ROOT = "quarkus.hibernate-routing.";
    static final String SETTINGS = ROOT + "settings.";

    /** Every key of the library, by its name after the prefix without separators or case. */
    private static final Map<String, String> KNOWN = RoutingSettingNames.keys().stream()
            .filter(key -> key.startsWith(RoutingSettings.PREFIX) && !key.equals(RoutingSettings.PREFIX))
            .collect(Collectors.toMap(key -> uniform(key.substring(RoutingSettings.PREFIX.length())), key -> key));

    /** Keys with a property of their own under {@value #ROOT}, or set by the extension. */
    private static final Map<String, String> OWN = Map.of(
            RoutingSettings.REPLICA_URLS, ROOT + "replica-urls",
            RoutingSettings.REPLICA_DATASOURCES, ROOT + "replica-datasources",
            RoutingSettings.REPLICA_USER, ROOT + "replica-username",
            RoutingSettings.REPLICA_PASSWORD, ROOT + "replica-password",
            RoutingSettings.TRANSACTIONS, ROOT + "transactions",
            RoutingSettings.REDIS_URI, ROOT + "redis-uri",
            RoutingSettings.METER_REGISTRY, "quarkus-micrometer's registry, which the extension passes on");

    private QuarkusSettings() {}

    /**
     * @throws RoutingConfigurationException naming the key of an unknown setting, or of one that has its own
     *     property or that the extension sets
     */
    static Map<String, Object> from(HibernateRoutingConfig config) {
        final Map<String, Object> settings = new TreeMap<>();
        for (Map.Entry<String, String> setting : config.settings().entrySet()) {
            final String written = SETTINGS + setting.getKey();
            final String key = KNOWN.get(uniform(setting.getKey()));
            if (key == null) {
                // No value in the message: a misspelled password key would print the password.
                final String closest = RoutingSettingNames.closest(RoutingSettings.PREFIX + setting.getKey());
                throw RoutingConfigurationException.withMessage(
                        written,
                        "Unknown setting '" + written + "': hibernate-routing has no setting '"
                                + RoutingSettings.PREFIX + setting.getKey() + "'; did you mean '" + SETTINGS
                                + closest.substring(RoutingSettings.PREFIX.length()) + "'?");
            }
            if (OWN.containsKey(key)) {
                throw new RoutingConfigurationException(written, "(not shown)", OWN.get(key) + " instead");
            }
            if (key.startsWith(RoutingSettings.PREFIX + "primary.")) {
                throw new RoutingConfigurationException(
                        written,
                        "(not shown)",
                        "no primary pool setting under Quarkus, where the primary is the default datasource: size it"
                                + " with quarkus.datasource.jdbc.*");
            }
            settings.put(key, setting.getValue());
        }
        settings.put(RoutingSettings.TRANSACTIONS, config.transactions());
        config.redisUri().ifPresent(uri -> settings.put(RoutingSettings.REDIS_URI, uri));
        return settings;
    }

    /** {@code max-replica-lag}, {@code max_replica_lag}, {@code max.replica.lag} and {@code maxReplicaLag} alike. */
    static String uniform(String name) {
        final StringBuilder uniform = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            final char c = name.charAt(i);
            if (c != '-' && c != '_' && c != '.' && c != '"') {
                uniform.append(Character.toLowerCase(c));
            }
        }
        return uniform.toString().toLowerCase(Locale.ROOT);
    }

    static Set<String> knownKeys() {
        return Set.copyOf(KNOWN.values());
    }
}
