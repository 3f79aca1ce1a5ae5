package io.github.hibernaterouting.sample;

import io.github.hibernaterouting.routing.sql.internal.Masking;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Where the sample's databases and Redis are: the primary, the replicas, the credentials, the Redis
 * URI, and the names of the nodes for {@code X-Served-By}.
 *
 * <p>The embedded launcher hands one to the web application as the servlet context attribute
 * {@link #ATTRIBUTE}; a WAR deployed to a servlet container finds none there and reads the
 * environment instead ({@link #fromEnvironment}). {@link #toString()} never shows the password.
 *
 * @param primaryUrl JDBC URL of the primary
 * @param replicaUrls JDBC URLs of the hot standbys; empty means routing is off
 * @param user database user, for the primary and the replicas
 * @param password the user's password
 * @param redisUri the Redis server for the shared mutation marker, or {@code null} for none
 * @param nodeNames port→name map behind {@code X-Served-By}
 */
public record Servers(
        String primaryUrl,
        List<String> replicaUrls,
        String user,
        String password,
        String redisUri,
        NodeNames nodeNames) {
    /** The servlet context attribute the embedded launcher stores a {@code Servers} in. */
    public static final String ATTRIBUTE = Servers.class.getName();

    /** Environment variable with the primary's JDBC URL; set, the sample uses the given servers. */
    public static final String PRIMARY_URL_ENV = "SAMPLE_PRIMARY_URL";
    /** Environment variable with the replicas' JDBC URLs, comma-separated (the library's own variable). */
    public static final String REPLICA_URLS_ENV = "HIBERNATE_ROUTING_REPLICA_URLS";
    /** Environment variable with the database user. */
    public static final String USER_ENV = "SAMPLE_DB_USER";
    /** Environment variable with the database password. */
    public static final String PASSWORD_ENV = "SAMPLE_DB_PASSWORD";
    /** Environment variable with the Redis URI (the library's own variable). */
    public static final String REDIS_URI_ENV = "HIBERNATE_ROUTING_REDIS_URI";

    public Servers {
        Objects.requireNonNull(primaryUrl, "primaryUrl");
        replicaUrls = List.copyOf(replicaUrls);
        Objects.requireNonNull(nodeNames, "nodeNames");
    }

    /**
     * The servers named by the environment variables, or {@code null} when {@value #PRIMARY_URL_ENV}
     * is not set.
     *
     * @throws IllegalStateException if the primary is set but the user is not
     */
    public static Servers fromEnvironment(Map<String, String> env) {
        final String primary = blankToNull(env.get(PRIMARY_URL_ENV));
        if (primary == null) {
            return null;
        }
        final String user = blankToNull(env.get(USER_ENV));
        if (user == null) {
            throw new IllegalStateException(PRIMARY_URL_ENV + " is set, so " + USER_ENV + " (and usually "
                    + PASSWORD_ENV + ") must be set too");
        }
        final String replicas = blankToNull(env.get(REPLICA_URLS_ENV));
        final List<String> replicaUrls = replicas == null
                ? List.of()
                : Arrays.stream(replicas.split(","))
                        .map(String::trim)
                        .filter(url -> !url.isEmpty())
                        .toList();
        return new Servers(
                primary,
                replicaUrls,
                user,
                env.getOrDefault(PASSWORD_ENV, ""),
                blankToNull(env.get(REDIS_URI_ENV)),
                NodeNames.fromUrls(primary, replicaUrls));
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /** URLs with their credentials masked by the library's masker, the one every module uses. */
    @Override
    public String toString() {
        return "Servers[primary=" + Masking.url(primaryUrl) + ", replicas="
                + replicaUrls.stream().map(Masking::url).toList()
                + ", user=" + user + ", password=****, redis="
                + (redisUri == null ? "none" : Masking.url(redisUri)) + "]";
    }
}
