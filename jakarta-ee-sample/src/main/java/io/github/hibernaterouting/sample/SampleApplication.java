package io.github.hibernaterouting.sample;

import java.net.URI;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the sample: an embedded primary with two streaming replicas and a Redis (or the servers named
 * by the environment, see {@link Servers}), the web application on an embedded Jetty at
 * {@code http://127.0.0.1:<port>/}, and a walk-through to paste into a shell. Ctrl-C stops
 * everything and leaves nothing behind.
 *
 * <p>Port: {@code --port=N}, else the environment variable {@code SAMPLE_PORT}, else 8080; 0 picks a
 * free port.
 */
public final class SampleApplication {
    /** The seeded user whose key the walk-through uses. */
    static final String DEMO_KEY = "demo-alice";

    private SampleApplication() {}

    public static void main(String[] args) throws Exception {
        final int port = port(args, System.getenv("SAMPLE_PORT"));
        Servers servers = Servers.fromEnvironment(System.getenv());
        final EmbeddedServers embedded;
        if (servers == null) {
            System.out.println(
                    "Starting a PostgreSQL primary with two streaming replicas and a Redis on 127.0.0.1 ...");
            embedded = EmbeddedServers.start();
            servers = embedded.servers();
        } else {
            embedded = null;
        }
        final SampleServer server;
        try {
            server = SampleServer.start(servers, port);
        } catch (Exception e) {
            if (embedded != null) {
                embedded.close();
            }
            throw e;
        }

        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                server.close();
                            } catch (Exception e) {
                                System.err.println("Could not stop Jetty cleanly: " + e);
                            } finally {
                                if (embedded != null) {
                                    embedded.close();
                                }
                                System.out.println("Stopped the web server, the persistence unit"
                                        + (embedded != null ? ", Redis and the PostgreSQL cluster." : "."));
                                stopped.countDown();
                            }
                        },
                        "sample-shutdown"));

        System.out.println();
        System.out.println("The sample runs at " + server.uri() + "  (routing status page; /metrics for Prometheus)");
        System.out.println("Servers: " + servers);
        System.out.println();
        System.out.println(
                "Write a note, then read it back at once with the same key (read-your-writes), then list the notes:");
        System.out.println();
        walkthrough(server.uri()).forEach(command -> System.out.println("  " + command + "\n"));
        System.out.println(
                "Watch X-Served-By (which server ran the read) and X-Consistency-Token (the write's WAL position).");
        System.out.println("Other keys: demo-bob (another user), demo-readonly (403 on writes). Press Ctrl-C to stop.");
        stopped.await();
    }

    /**
     * The three shell commands of the walk-through: create a note (printing the response and keeping
     * the new note's id from its {@code Location} in {@code $id}), read it back at once with the same
     * key, list the notes.
     */
    public static List<String> walkthrough(URI base) {
        final String notes = base.resolve("api/notes").toString();
        final String auth = "-H 'Authorization: Bearer " + DEMO_KEY + "'";
        return List.of(
                "id=$(curl -si -X POST " + notes + " " + auth
                        + " -H 'Content-Type: application/json' -d '{\"title\":\"Hello\",\"body\":\"Read your own writes\"}'"
                        + " | tee -a /dev/stderr | tr -d '\\r' | sed -nE 's#^Location: .*/([0-9]+)$#\\1#ip')",
                "curl -i " + notes + "/$id " + auth,
                "curl -i " + notes + " " + auth);
    }

    static int port(String[] args, String env) {
        String value = env;
        for (String arg : args) {
            if (arg.startsWith("--port=")) {
                value = arg.substring("--port=".length());
            } else {
                throw new IllegalArgumentException(
                        "Unknown argument '" + arg + "'; the only one is --port=N (0: any free port)");
            }
        }
        if (value == null || value.isBlank()) {
            return 8080;
        }
        try {
            final int port = Integer.parseInt(value.trim());
            if (port < 0 || port > 65535) {
                throw new NumberFormatException();
            }
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("The port must be a number from 0 to 65535, not '" + value + "'", e);
        }
    }
}
