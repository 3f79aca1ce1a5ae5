package io.github.hibernaterouting.routing.internal.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingSettings;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md and the javadoc of {@link RoutingSettings} must list every setting, with the
 * defaults the code really uses.
 */
class RoutingSettingsDocumentationTest {
    private static final Path DOC = Path.of("..", "docs", "configuration.md");
    private static final Path SETTINGS_SOURCES =
            Path.of("src", "main", "java", "io", "github", "hibernaterouting", "routing");
    /** RoutingSettings and the interfaces it extends, where the constants are declared. */
    private static final List<String> SETTINGS_FILES =
            List.of("RoutingSettings.java", "ReplicaSettings.java", "PoolSettings.java", "ConsistencySettings.java");

    private static Map<String, String> documentedDefaults() throws IOException {
        final Map<String, String> defaults = new LinkedHashMap<>();
        for (String line : Files.readAllLines(DOC)) {
            if (!line.startsWith("| `hibernate.routing.")) {
                continue;
            }
            final String[] cells = line.split("\\|");
            defaults.put(cells[1].trim().replace("`", ""), cells[3].trim().replace("`", ""));
        }
        return defaults;
    }

    private static List<String> settingKeys() throws IllegalAccessException {
        final List<String> keys = new ArrayList<>();
        for (Field field : RoutingSettings.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers())
                    && field.getType() == String.class
                    && !field.getName().equals("PREFIX")
                    && !field.getName().startsWith("DEFAULT_")) {
                keys.add((String) field.get(null));
            }
        }
        return keys;
    }

    @Test
    void everySetting_isDocumented() throws Exception {
        assertThat(documentedDefaults().keySet()).containsExactlyInAnyOrderElementsOf(settingKeys());
    }

    @Test
    void everyDocumentedDefault_givesTheSameConfigurationAsLeavingItOut() throws Exception {
        final Map<String, Object> base = new HashMap<>();
        base.put("jakarta.persistence.jdbc.url", "jdbc:postgresql://127.0.0.1:5432/app");
        base.put(RoutingSettings.REPLICA_URLS, "jdbc:postgresql://127.0.0.1:5433/app");
        final RoutingConfig implicit = RoutingConfig.from(base, name -> null);
        int checked = 0;
        for (Map.Entry<String, String> entry : documentedDefaults().entrySet()) {
            if (entry.getValue().startsWith("—")) {
                continue; // no single default value (URLs, credentials, the registry)
            }
            final Map<String, Object> explicit = new HashMap<>(base);
            explicit.put(entry.getKey(), entry.getValue());
            assertThat(RoutingConfig.from(explicit, name -> null))
                    .as("documented default of %s: %s", entry.getKey(), entry.getValue())
                    .usingRecursiveComparison()
                    .isEqualTo(implicit);
            checked++;
        }
        assertThat(checked).isGreaterThanOrEqualTo(18);
    }

    @Test
    void documentedDefault_thatDiffersFromTheCode_wouldBeCaught() {
        final Map<String, Object> base = new HashMap<>();
        base.put("jakarta.persistence.jdbc.url", "jdbc:postgresql://127.0.0.1:5432/app");
        base.put(RoutingSettings.REPLICA_URLS, "jdbc:postgresql://127.0.0.1:5433/app");
        final Map<String, Object> wrong = new HashMap<>(base);
        wrong.put(RoutingSettings.MAX_REPLICA_LAG, "11s");
        assertThat(RoutingConfig.from(wrong, name -> null))
                .usingRecursiveComparison()
                .isNotEqualTo(RoutingConfig.from(base, name -> null));
    }

    /** The javadoc block of each key constant in RoutingSettings and its super-interfaces, by constant name. */
    private static Map<String, String> javadocByConstant() throws IOException {
        final Map<String, String> docs = new LinkedHashMap<>();
        final java.util.regex.Pattern constant = java.util.regex.Pattern.compile(
                "/\\*\\*((?:(?!\\*/).)*)\\*/\\s*String (\\w+) = (?:PREFIX \\+ \"|\"hibernate\\.routing\\.)",
                java.util.regex.Pattern.DOTALL);
        for (String file : SETTINGS_FILES) {
            final java.util.regex.Matcher matcher = constant.matcher(Files.readString(SETTINGS_SOURCES.resolve(file)));
            while (matcher.find()) {
                docs.put(matcher.group(2), matcher.group(1));
            }
        }
        return docs;
    }

    @Test
    void everyKeyWithACodeDefault_citesItInItsJavadoc_andTheConfigurationUsesIt() throws Exception {
        final Map<String, String> javadoc = javadocByConstant();
        final Map<String, Object> base = new HashMap<>();
        base.put("jakarta.persistence.jdbc.url", "jdbc:postgresql://127.0.0.1:5432/app");
        base.put(RoutingSettings.REPLICA_URLS, "jdbc:postgresql://127.0.0.1:5433/app");
        final RoutingConfig implicit = RoutingConfig.from(base, name -> null);
        int checked = 0;
        for (Field field : RoutingSettings.class.getFields()) {
            if (!field.getName().startsWith("DEFAULT_")) {
                continue;
            }
            final String keyConstant = field.getName().substring("DEFAULT_".length());
            final String key =
                    (String) RoutingSettings.class.getField(keyConstant).get(null);
            assertThat(javadoc.get(keyConstant))
                    .as("javadoc of %s", keyConstant)
                    .contains("@settingDefault {@value #" + field.getName() + "}");
            final Map<String, Object> explicit = new HashMap<>(base);
            explicit.put(key, String.valueOf(field.get(null)));
            assertThat(RoutingConfig.from(explicit, name -> null))
                    .as("%s set to %s", key, field.get(null))
                    .usingRecursiveComparison()
                    .isEqualTo(implicit);
            checked++;
        }
        assertThat(checked).isGreaterThanOrEqualTo(25);
    }

    @Test
    void everyKey_statesItsDefaultInItsJavadoc() throws Exception {
        final Map<String, String> javadoc = javadocByConstant();
        for (Field field : RoutingSettings.class.getFields()) {
            if (field.getType() == String.class
                    && !field.getName().equals("PREFIX")
                    && !field.getName().startsWith("DEFAULT_")) {
                assertThat(javadoc.get(field.getName()))
                        .as("javadoc of %s", field.getName())
                        .contains("@settingDefault");
            }
        }
    }
}
