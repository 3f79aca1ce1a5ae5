package io.github.hibernaterouting.sample.boot;

import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/** The library's names of the servers (primary, replica1, …), by the port in their JDBC URL. */
@Component
public class NodeNames {
    private final Map<Integer, String> names = new HashMap<>();

    public NodeNames(
            @Value("${spring.datasource.url}") String primary,
            @Value("${hibernate.routing.replica_urls}") List<String> replicas) {
        names.put(port(primary), "primary");
        for (int i = 0; i < replicas.size(); i++) {
            names.putIfAbsent(port(replicas.get(i).strip()), "replica" + (i + 1));
        }
    }

    /** The name of the server listening on {@code port}, or {@code port:<n>} for an unknown one. */
    public String name(int port) {
        return names.getOrDefault(port, "port:" + port);
    }

    private static int port(String jdbcUrl) {
        final int port = URI.create(jdbcUrl.substring("jdbc:".length())).getPort();
        return port < 0 ? 5432 : port;
    }
}
