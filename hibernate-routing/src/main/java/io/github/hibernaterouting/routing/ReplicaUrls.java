package io.github.hibernaterouting.routing;

import io.github.hibernaterouting.routing.sql.internal.Masking;

/**
 * The checks the library applies to each replica JDBC URL of {@link RoutingSettings#REPLICA_URLS},
 * for integrations that build replica pools themselves (the Spring Boot starter does): a PostgreSQL
 * JDBC URL, and no user-info, which the PostgreSQL driver would take for a host name and print, with
 * the password in it.
 */
public final class ReplicaUrls {
    /** What a replica URL must look like, for messages. */
    public static final String EXPECTED =
            "a PostgreSQL JDBC URL starting with jdbc:postgresql:, such as jdbc:postgresql://replica1:5432/app";

    private ReplicaUrls() {}

    /**
     * {@code url}, stripped, if it is a PostgreSQL JDBC URL without user-info.
     *
     * @param key the setting, property or environment variable it came from, for the message
     * @param expected what the setting takes, for the message ({@link #EXPECTED} for one URL)
     * @throws RoutingConfigurationException naming {@code key}, with the URL masked
     */
    public static String check(String key, String url, String expected) {
        final String stripped = url == null ? "" : url.strip();
        if (!stripped.startsWith("jdbc:postgresql:")) {
            throw new RoutingConfigurationException(key, Masking.url(stripped), expected);
        }
        if (Masking.hasUserInfo(stripped)) {
            throw new RoutingConfigurationException(
                    key,
                    stripped,
                    "a JDBC URL without user-info (user:password@): the PostgreSQL driver takes it for a host name. "
                            + "Give the user and password as jakarta.persistence.jdbc.user and .password (replicas: "
                            + RoutingSettings.REPLICA_USER + ", " + RoutingSettings.REPLICA_PASSWORD
                            + "), or as user= and password= parameters");
        }
        return stripped;
    }
}
