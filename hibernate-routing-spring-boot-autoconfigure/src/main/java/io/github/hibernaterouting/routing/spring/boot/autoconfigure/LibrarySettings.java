package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettingNames;
import io.github.hibernaterouting.routing.RoutingSettings;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The library's settings among the application's {@code hibernate.routing.*} properties, with the
 * keys the library knows them by.
 *
 * <p>Spring Boot's relaxed names are accepted ({@code max-replica-lag}, {@code max_replica_lag}, the
 * environment variable {@code HIBERNATE_ROUTING_MAX_REPLICA_LAG}). A key that is no setting of the
 * library fails the start, as would a typo the library would otherwise never read.
 */
final class LibrarySettings {
    /** Every key of {@link RoutingSettings}, by its name without separators and case. */
    private static final Map<String, String> KNOWN = knownKeys();

    /** Keys the starter reads itself (the replicas, the filter); never passed on. */
    private static final Set<String> STARTER_ROOTS =
            Set.of("replicaurls", "replicauser", "replicapassword", "replicas", "web");

    /** Keys the starter sets itself. */
    private static final Set<String> SET_BY_STARTER =
            Set.of(RoutingSettings.REPLICA_DATASOURCES, RoutingSettings.METER_REGISTRY);

    private LibrarySettings() {}

    /**
     * The library's settings in {@code environment}, keyed as in {@link RoutingSettings}, values as written.
     *
     * @throws RoutingConfigurationException naming a key that is no setting of the library, a pool setting
     *     (the starter builds the pools), or a key the starter sets itself
     */
    static Map<String, Object> from(Environment environment) {
        final Map<String, String> properties = Binder.get(environment)
                .bind(HibernateRoutingProperties.PREFIX, Bindable.mapOf(String.class, String.class))
                .orElseGet(Map::of);
        final Map<String, Object> settings = new TreeMap<>();
        for (Map.Entry<String, String> property : properties.entrySet()) {
            final String name = property.getKey();
            final String uniform = uniform(name);
            if (STARTER_ROOTS.stream().anyMatch(root -> uniform.equals(root) || startsWithRoot(name, root))) {
                continue;
            }
            final String key = KNOWN.get(uniform);
            final String written = RoutingSettings.PREFIX + name;
            if (key == null) {
                // No value in the message: a misspelled password key would otherwise print the password.
                throw RoutingConfigurationException.withMessage(
                        written,
                        "Unknown setting '" + written + "': neither a setting of hibernate-routing nor one of the"
                                + " starter's (replica_urls, replica_user, replica_password, replicas[n].*, web.*);"
                                + " did you mean '" + RoutingSettingNames.closest(written) + "'?");
            }
            if (key.startsWith(RoutingSettings.PREFIX + "primary.")
                    || key.startsWith(RoutingSettings.PREFIX + "replica.")) {
                throw refused(
                        written,
                        "no pool setting under Spring Boot, where the library builds no pool: size the primary's"
                                + " pool with spring.datasource.hikari.* and each replica's with"
                                + " hibernate.routing.replicas[n].hikari.*");
            }
            if (SET_BY_STARTER.contains(key)) {
                throw refused(
                        written,
                        "nothing: the starter sets it (the replicas are hibernate.routing.replica_urls or"
                                + " hibernate.routing.replicas[n].url, the meters go to Spring Boot's MeterRegistry)");
            }
            settings.put(key, property.getValue());
        }
        return settings;
    }

    /** The value is not shown: a misspelt password key would hold a password. */
    private static RoutingConfigurationException refused(String key, String expected) {
        return new RoutingConfigurationException(key, "(not shown)", expected);
    }

    private static boolean startsWithRoot(String name, String root) {
        final String lower = name.toLowerCase(Locale.ROOT);
        return lower.startsWith(root + ".") || lower.startsWith(root + "[");
    }

    /** {@code max-replica-lag}, {@code max_replica_lag}, {@code max.replica.lag} and {@code maxReplicaLag} alike. */
    static String uniform(String name) {
        final StringBuilder uniform = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            final char c = name.charAt(i);
            if (c != '-' && c != '_' && c != '.') {
                uniform.append(Character.toLowerCase(c));
            }
        }
        return uniform.toString();
    }

    /** The keys of {@link RoutingSettings} and the interfaces it extends. */
    static Set<String> keys() {
        return Set.copyOf(KNOWN.values());
    }

    private static Map<String, String> knownKeys() {
        final Map<String, String> known = new TreeMap<>();
        for (Field field : RoutingSettings.class.getFields()) {
            if (field.getType() != String.class || !Modifier.isStatic(field.getModifiers())) {
                continue;
            }
            final String value;
            try {
                value = (String) field.get(null);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
            if (value.startsWith(RoutingSettings.PREFIX) && !value.equals(RoutingSettings.PREFIX)) {
                known.put(uniform(value.substring(RoutingSettings.PREFIX.length())), value);
            }
        }
        return Map.copyOf(known);
    }
}
