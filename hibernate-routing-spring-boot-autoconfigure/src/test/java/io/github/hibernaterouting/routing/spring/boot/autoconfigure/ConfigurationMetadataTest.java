package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingSettings;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** IDE completion: the metadata Spring Boot tools read names every property the starter accepts. */
class ConfigurationMetadataTest {
    private static final Pattern NAME = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]+)\"");

    @Test
    void everySettingOfTheLibrary_thatAUserSets_hasMetadata() throws IOException {
        final Set<String> names = names();
        final Set<String> expected = LibrarySettings.keys().stream()
                .filter(key -> !key.startsWith(RoutingSettings.PREFIX + "primary.")
                        && !key.startsWith(RoutingSettings.PREFIX + "replica."))
                .filter(key -> !Set.of(
                                RoutingSettings.REPLICA_DATASOURCES,
                                RoutingSettings.METER_REGISTRY,
                                RoutingSettings.REPLICA_URLS,
                                RoutingSettings.REPLICA_USER,
                                RoutingSettings.REPLICA_PASSWORD)
                        .contains(key))
                .collect(Collectors.toSet());

        assertThat(names).containsAll(expected);
    }

    @Test
    void theStartersOwnProperties_haveMetadata() throws IOException {
        assertThat(names())
                .contains(
                        "hibernate.routing.replica-urls",
                        "hibernate.routing.replica-user",
                        "hibernate.routing.replica-password",
                        "hibernate.routing.replicas",
                        "hibernate.routing.web.enabled",
                        "hibernate.routing.web.filter-order",
                        "hibernate.routing.web.rules",
                        "hibernate.routing.web.require-actor",
                        "hibernate.routing.web.consistency-cookie.name",
                        "hibernate.routing.web.consistency-cookie.max-age",
                        "hibernate.routing.web.consistency-cookie.secure",
                        "management.health.hibernate-routing.strict");
    }

    private static Set<String> names() throws IOException {
        try (InputStream in =
                ConfigurationMetadataTest.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("generated metadata").isNotNull();
            final Matcher matcher = NAME.matcher(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            final Set<String> names = new java.util.HashSet<>();
            while (matcher.find()) {
                names.add(matcher.group(1));
            }
            return names;
        }
    }
}
