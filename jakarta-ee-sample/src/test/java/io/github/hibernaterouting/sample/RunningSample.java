package io.github.hibernaterouting.sample;

import jakarta.persistence.EntityManagerFactory;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The sample as its main runs it (embedded primary, two replicas, Redis, the web application on
 * Jetty on a free port), started once for all test classes and stopped when the run ends.
 * Inject it as a test-method or constructor parameter.
 */
public final class RunningSample implements AutoCloseable {
    private final EmbeddedServers servers;
    private final SampleServer server;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private RunningSample(EmbeddedServers servers, SampleServer server) {
        this.servers = servers;
        this.server = server;
    }

    private static RunningSample start() throws Exception {
        final EmbeddedServers servers = EmbeddedServers.start();
        try {
            return new RunningSample(servers, SampleServer.start(servers.servers(), 0));
        } catch (Exception | Error e) {
            servers.close();
            throw e;
        }
    }

    public EmbeddedServers servers() {
        return servers;
    }

    public URI uri() {
        return server.uri();
    }

    /** The application's persistence unit, for {@code RoutingLeakCheck#watch}. */
    public EntityManagerFactory entityManagerFactory() {
        return server.entityManagerFactory();
    }

    /** A request to {@code path} (relative to the application) with {@code apiKey}, or none if {@code null}. */
    public HttpRequest.Builder request(String path, String apiKey) {
        final HttpRequest.Builder request =
                HttpRequest.newBuilder(uri().resolve(path)).timeout(Duration.ofSeconds(30));
        if (apiKey != null) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        return request;
    }

    /** Sends {@code request}, reading the body as a string. */
    public HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** {@code POST /api/notes} as {@code apiKey}. */
    public HttpResponse<String> createNote(String apiKey, String title, String body)
            throws IOException, InterruptedException {
        return send(request("api/notes", apiKey)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"title\":\"" + title + "\",\"body\":\"" + body + "\"}")));
    }

    public HttpClient http() {
        return http;
    }

    @Override
    public void close() throws Exception {
        try {
            server.close();
        } finally {
            servers.close();
        }
    }

    /** Starts the sample on first use in a test run and closes it at the end of the run. */
    public static final class Extension implements BeforeAllCallback, ParameterResolver {
        @Override
        public void beforeAll(ExtensionContext context) throws Exception {
            get(context);
        }

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == RunningSample.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return get(context);
        }

        private static RunningSample get(ExtensionContext context) {
            // The root store closes AutoCloseable values when the whole run ends, so test classes share one sample.
            return context.getRoot()
                    .getStore(ExtensionContext.Namespace.create(RunningSample.class))
                    .getOrComputeIfAbsent(
                            RunningSample.class,
                            key -> {
                                try {
                                    return start();
                                } catch (Exception e) {
                                    throw new IllegalStateException("Could not start the sample", e);
                                }
                            },
                            RunningSample.class);
        }
    }
}
