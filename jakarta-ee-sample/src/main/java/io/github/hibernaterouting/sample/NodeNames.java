package io.github.hibernaterouting.sample;

import io.github.hibernaterouting.routing.sql.internal.Masking;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.postgresql.Driver;

/**
 * Maps the port a PostgreSQL server reports ({@code select inet_server_port()}) to the name the
 * routing library gives that server: {@code primary}, {@code replica1}, {@code replica2}, …
 *
 * <p>A demo aid for the {@code X-Served-By} header, not something an application needs: it assumes
 * every server listens on its own port, which holds on one machine (the embedded cluster) but not
 * for servers on different hosts that all use 5432; a port it cannot tell apart shows as
 * {@code port N}. Immutable and thread-safe.
 */
public final class NodeNames {
    private final Map<Integer, String> byPort;

    /** Names from an explicit port→name map, as the embedded launcher knows it. */
    public NodeNames(Map<Integer, String> byPort) {
        this.byPort = Map.copyOf(byPort);
    }

    /**
     * Names from the JDBC URLs of the primary and the replicas, in the order the library numbers them;
     * ports that appear twice are left out, because they cannot be told apart.
     */
    public static NodeNames fromUrls(String primaryUrl, List<String> replicaUrls) {
        final Map<Integer, String> byPort = new LinkedHashMap<>();
        final Map<Integer, Integer> seen = new LinkedHashMap<>();
        put(byPort, seen, primaryUrl, "primary");
        for (int i = 0; i < replicaUrls.size(); i++) {
            put(byPort, seen, replicaUrls.get(i), "replica" + (i + 1));
        }
        seen.forEach((port, count) -> {
            if (count > 1) {
                byPort.remove(port);
            }
        });
        return new NodeNames(byPort);
    }

    private static void put(Map<Integer, String> byPort, Map<Integer, Integer> seen, String url, String name) {
        final Properties properties = Driver.parseURL(url, null);
        if (properties == null) {
            throw new IllegalArgumentException("Not a PostgreSQL JDBC URL: " + Masking.url(url));
        }
        final int port =
                Integer.parseInt(properties.getProperty("PGPORT", "5432").split(",")[0]);
        byPort.put(port, name);
        seen.merge(port, 1, Integer::sum);
    }

    /** The node's name, or {@code port N} if the port is not known. */
    public String nameOf(int port) {
        final String name = byPort.get(port);
        return name != null ? name : "port " + port;
    }

    @Override
    public String toString() {
        return byPort.toString();
    }
}
