package io.github.hibernaterouting.sample;

import jakarta.persistence.EntityManagerFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.eclipse.jetty.ee11.servlet.ErrorPageErrorHandler;
import org.eclipse.jetty.ee11.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The sample web application on an embedded Jetty 12 (Jakarta EE 11), bound to 127.0.0.1.
 *
 * <p>Jetty deploys the webapp directory ({@code src/main/webapp}) with its {@code WEB-INF/web.xml},
 * the same descriptor the WAR carries, so filters, servlets and the bootstrap listener are
 * configured in one place. Classes come from the launcher's class path, as there is no
 * {@code WEB-INF/classes} in the source tree.
 */
public final class SampleServer implements AutoCloseable {
    /** System property with the webapp directory; the Maven build sets it. */
    public static final String WEBAPP_PROPERTY = "sample.webapp";

    private final Server server;
    private final WebAppContext webapp;
    private final URI uri;

    private SampleServer(Server server, WebAppContext webapp, URI uri) {
        this.server = server;
        this.webapp = webapp;
        this.uri = uri;
    }

    /**
     * Starts the application on {@code servers}.
     *
     * @param port the port, or 0 for any free one
     * @throws Exception if Jetty or the application (schema, persistence unit) cannot start; nothing is left running
     */
    public static SampleServer start(Servers servers, int port) throws Exception {
        return start(servers, port, Map.of());
    }

    /**
     * Starts the application on {@code servers} with more persistence-unit settings, which win over
     * {@code persistence.xml} (for example a small primary pool: {@code hibernate.routing.primary.maximum_pool_size}).
     *
     * @param port the port, or 0 for any free one
     * @throws Exception if Jetty or the application (schema, persistence unit) cannot start; nothing is left running
     */
    public static SampleServer start(Servers servers, int port, Map<String, String> settings) throws Exception {
        final Server server = new Server();
        final ServerConnector connector = new ServerConnector(server);
        // Loopback only: the sample has demo keys and no TLS.
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);

        final WebAppContext webapp = new WebAppContext();
        webapp.setContextPath("/");
        webapp.setBaseResourceAsPath(webappDirectory());
        webapp.setParentLoaderPriority(true);
        // Fail the start when the bootstrap listener fails, instead of serving 503s.
        webapp.setThrowUnavailableOnStartupException(true);
        webapp.setAttribute(Servers.ATTRIBUTE, servers);
        webapp.setAttribute(SampleBootstrap.SETTINGS_ATTRIBUTE, Map.copyOf(settings));
        // Error pages without stack traces: they would show SQL to any client.
        final ErrorPageErrorHandler errors = new ErrorPageErrorHandler();
        errors.setShowStacks(false);
        errors.setShowMessageInTitle(false);
        webapp.setErrorHandler(errors);
        server.setHandler(webapp);
        server.setStopAtShutdown(false);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        return new SampleServer(server, webapp, URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/"));
    }

    /** {@code http://127.0.0.1:<port>/}. */
    public URI uri() {
        return uri;
    }

    /** The application's persistence unit while it runs, for tests that look at its routing and pools. */
    public EntityManagerFactory entityManagerFactory() {
        return SampleBootstrap.entityManagerFactory(webapp.getServletContext());
    }

    /** Stops Jetty, which stops the application: worker, persistence unit, meters. */
    @Override
    public void close() throws Exception {
        server.stop();
    }

    /** The webapp directory: {@value #WEBAPP_PROPERTY}, else {@code src/main/webapp} of this module. */
    static Path webappDirectory() {
        final String configured = System.getProperty(WEBAPP_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return requireWebapp(Path.of(configured));
        }
        for (Path candidate : new Path[] {Path.of("src/main/webapp"), Path.of("jakarta-ee-sample/src/main/webapp")}) {
            if (Files.isRegularFile(candidate.resolve("WEB-INF/web.xml"))) {
                return candidate.toAbsolutePath();
            }
        }
        throw new IllegalStateException(
                "Cannot find the webapp directory (with WEB-INF/web.xml): run from the project or "
                        + "module directory, or set -D" + WEBAPP_PROPERTY
                        + "=<path to jakarta-ee-sample/src/main/webapp>");
    }

    private static Path requireWebapp(Path directory) {
        if (!Files.isRegularFile(directory.resolve("WEB-INF/web.xml"))) {
            throw new IllegalStateException("-D" + WEBAPP_PROPERTY + "=" + directory + " has no WEB-INF/web.xml");
        }
        return directory.toAbsolutePath();
    }
}
