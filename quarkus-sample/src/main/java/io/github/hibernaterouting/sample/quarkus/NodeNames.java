package io.github.hibernaterouting.sample.quarkus;

import jakarta.enterprise.context.ApplicationScoped;
import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/** The names of the servers (primary, replica1, …), by the port in their JDBC URL. */
@ApplicationScoped
public class NodeNames {
    private final Map<Integer, String> names = new HashMap<>();

    public NodeNames(
            @ConfigProperty(name = "quarkus.datasource.jdbc.url") String primary,
            @ConfigProperty(name = "quarkus.hibernate-routing.replica-urls") Optional<List<String>> replicas) {
        names.put(port(primary), "primary");
        final List<String> urls = replicas.orElse(List.of());
        for (int i = 0; i < urls.size(); i++) {
            names.putIfAbsent(port(urls.get(i).strip()), "replica" + (i + 1));
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
