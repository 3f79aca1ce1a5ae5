package io.github.hibernaterouting.sample.payara;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.sample.NodeNames;
import io.github.hibernaterouting.sample.SampleBootstrap;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceUnit;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * Starts the sample on a Jakarta EE server: the persistence unit and the {@code EntityManager} come
 * from the container, the worker's thread from the server's managed thread factory; the rest is
 * {@link SampleBootstrap#start}, as on the embedded Jetty.
 *
 * <p>The schema must exist before the application starts (the persistence unit checks the stamp
 * column at bootstrap): run {@code db/schema.sql} on the primary first, as a migration would.
 */
public class PayaraBootstrap implements ServletContextListener {
    /** The primary's data source, as in {@code persistence.xml}'s {@code <jta-data-source>}. */
    static final String PRIMARY_DATA_SOURCE = "java:global/jdbc/primary";

    @PersistenceUnit(unitName = "sample")
    private EntityManagerFactory emf;

    @Inject
    private ContainerUnitOfWork unitOfWork;

    @Resource(lookup = "java:comp/DefaultManagedThreadFactory")
    private ThreadFactory threads;

    private PrometheusMeterRegistry registry;

    @Override
    public void contextInitialized(ServletContextEvent event) {
        // The library records its meters in Micrometer's global registry unless given one; /metrics shows them.
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Metrics.globalRegistry.add(registry);
        SampleBootstrap.start(event.getServletContext(), emf, unitOfWork, threads, nodeNames(), registry);
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        // The container closes its persistence unit itself.
        SampleBootstrap.stop(event.getServletContext(), false);
        if (registry != null) {
            Metrics.globalRegistry.remove(registry);
        }
    }

    /**
     * The names behind {@code X-Served-By}: the port each data source's server reports, named as the
     * library names its nodes ({@code primary}, then {@code replica1}, … in the order of
     * {@code hibernate.routing.replica_datasources}).
     */
    private NodeNames nodeNames() {
        final Object replicas = emf.getProperties().get(RoutingSettings.REPLICA_DATASOURCES);
        final List<String> names = replicas == null
                ? List.of()
                : Arrays.stream(replicas.toString().split(","))
                        .map(String::trim)
                        .filter(name -> !name.isEmpty())
                        .toList();
        final Map<Integer, String> byPort = new LinkedHashMap<>();
        byPort.put(port(PRIMARY_DATA_SOURCE), "primary");
        for (int i = 0; i < names.size(); i++) {
            byPort.put(port(names.get(i)), "replica" + (i + 1));
        }
        return new NodeNames(byPort);
    }

    private static int port(String jndiName) {
        try {
            final DataSource dataSource = (DataSource) new InitialContext().lookup(jndiName);
            try (Connection connection = dataSource.getConnection();
                    Statement statement = connection.createStatement();
                    ResultSet result = statement.executeQuery("select inet_server_port()")) {
                result.next();
                return result.getInt(1);
            }
        } catch (NamingException | SQLException e) {
            throw new IllegalStateException("Could not ask data source " + jndiName + " for its server's port", e);
        }
    }
}
