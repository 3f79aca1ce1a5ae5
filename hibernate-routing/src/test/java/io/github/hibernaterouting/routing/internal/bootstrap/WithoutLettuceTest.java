package io.github.hibernaterouting.routing.internal.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@code redis.uri} without Lettuce on the class path: the library's own classes are loaded again,
 * from where they were compiled, by a class loader that hides {@code io.lettuce}, as an application
 * without the optional dependency would see them.
 */
class WithoutLettuceTest {
    /** Loads the library's classes itself (child first) and has no {@code io.lettuce} at all. */
    static final class WithoutLettuce extends URLClassLoader {
        WithoutLettuce() {
            super(
                    new URL[] {
                        RoutingConfig.class
                                .getProtectionDomain()
                                .getCodeSource()
                                .getLocation()
                    },
                    RoutingConfig.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("io.lettuce.")) {
                throw new ClassNotFoundException(name + " (hidden by the test)");
            }
            if (!name.startsWith("io.github.hibernaterouting.routing.")
                    || name.startsWith("io.github.hibernaterouting.routing.sql.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> type = findLoadedClass(name);
                if (type == null) {
                    try {
                        type = findClass(name);
                    } catch (ClassNotFoundException notOurs) {
                        type = super.loadClass(name, false);
                    }
                }
                if (resolve) {
                    resolveClass(type);
                }
                return type;
            }
        }

        @Override
        public URL getResource(String name) {
            return name.startsWith("io/lettuce/") || name.startsWith("META-INF/maven/io.lettuce/")
                    ? null
                    : super.getResource(name);
        }
    }

    /** The Lettuce version the library is built and tested with: the one on this test's class path. */
    private static String lettuceVersion() throws IOException {
        try (InputStream in = WithoutLettuceTest.class.getResourceAsStream(
                "/META-INF/maven/io.lettuce/lettuce-core/pom.properties")) {
            final Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        }
    }

    @Test
    void redisUriWithoutLettuce_failsTheBootstrapNamingTheDependencyAndItsVersion() throws Exception {
        final Map<String, Object> settings = new HashMap<>();
        settings.put("jakarta.persistence.jdbc.url", "jdbc:postgresql://127.0.0.1:5432/app");
        settings.put(RoutingSettings.REPLICA_URLS, "jdbc:postgresql://127.0.0.1:5433/app");
        settings.put(RoutingSettings.REDIS_URI, "redis://127.0.0.1:6379");
        try (WithoutLettuce loader = new WithoutLettuce()) {
            assertThat(catchThrowable(() -> Class.forName("io.lettuce.core.RedisClient", false, loader)))
                    .isInstanceOf(ClassNotFoundException.class);
            final Class<?> config = Class.forName(RoutingConfig.class.getName(), true, loader);
            assertThat(config).isNotSameAs(RoutingConfig.class);
            final Method from = config.getMethod("from", Map.class, UnaryOperator.class);
            final UnaryOperator<String> noEnvironment = name -> null;
            final Throwable thrown = catchThrowable(() -> from.invoke(null, settings, noEnvironment));
            assertThat(thrown).isInstanceOf(InvocationTargetException.class);
            final Throwable cause = thrown.getCause();
            assertThat(cause.getClass().getName()).isEqualTo(RoutingConfigurationException.class.getName());
            assertThat(cause)
                    .hasMessageContaining(RoutingSettings.REDIS_URI)
                    .hasMessageContaining("io.lettuce:lettuce-core:" + lettuceVersion());
        }
        assertThat(RoutingConfig.from(settings, name -> null).redisEnabled())
                .as("with Lettuce on the class path")
                .isTrue();
    }
}
