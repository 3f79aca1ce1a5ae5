package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * Settings that name something the library needs at run time, checked at bootstrap so that a wrong
 * one fails there rather than later or silently: the Micrometer registry given as an object, and
 * Lettuce, the optional dependency behind {@code redis.uri}.
 */
final class RuntimeObjects {
    private RuntimeObjects() {}

    /** The shared marker talks to Redis through Lettuce, an optional dependency of the library. */
    static void requireLettuce(String key) {
        try {
            Class.forName("io.lettuce.core.RedisClient", false, RuntimeObjects.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw RoutingConfigurationException.withMessage(
                    key,
                    "'" + key + "' is set, but Lettuce, the Redis client of the shared marker, is not on the class "
                            + "path: add the dependency io.lettuce:lettuce-core:" + builtWith("lettuce.version")
                            + " (an optional dependency of hibernate-routing), or unset '" + key + "'");
        }
    }

    /** A version the library was built with ({@code build.properties}, filled in by Maven). */
    private static String builtWith(String name) {
        try (InputStream in = RuntimeObjects.class.getResourceAsStream("build.properties")) {
            final Properties versions = new Properties();
            if (in != null) {
                versions.load(in);
            }
            return versions.getProperty(name, "(the version hibernate-routing names in its POM)");
        } catch (IOException e) {
            return "(the version hibernate-routing names in its POM)";
        }
    }

    /** The registry, or null for Micrometer's global one; anything else fails, naming its type. */
    static MeterRegistry meterRegistry(Object value) {
        if (value == null || value instanceof String text && text.isBlank()) {
            return null;
        }
        if (value instanceof MeterRegistry registry) {
            return registry;
        }
        throw RoutingConfigurationException.withMessage(
                RoutingSettings.METER_REGISTRY,
                "'" + RoutingSettings.METER_REGISTRY + "' holds a "
                        + value.getClass().getName() + ", but must be an instance of "
                        + MeterRegistry.class.getName()
                        + (value instanceof String
                                ? ": pass the registry object in the properties given to the bootstrap "
                                        + "(Persistence.createEntityManagerFactory), which persistence.xml cannot hold"
                                : isMeterRegistryOfAnotherLoader(value.getClass())
                                        ? " of the library's class loader; this one comes from another class loader "
                                                + "(two copies of micrometer-core)"
                                        : "")
                        + "; leave it unset for Micrometer's global registry");
    }

    private static boolean isMeterRegistryOfAnotherLoader(Class<?> type) {
        for (Class<?> t = type; t != null; t = t.getSuperclass()) {
            if (t.getName().equals(MeterRegistry.class.getName())) {
                return true;
            }
        }
        return false;
    }
}
