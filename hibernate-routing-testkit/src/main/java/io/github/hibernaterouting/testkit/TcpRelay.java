package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay on a loopback port that hands each new connection to the next of its servers in turn,
 * as a load-balanced read endpoint does (a CloudNativePG {@code -ro} Service, an HAProxy or Kubernetes
 * Service port, PgBouncer over several hosts): one URL, several servers behind it, and nothing in the
 * URL that says which one a connection reached. Bytes pass unchanged both ways; the server a
 * connection reached tells itself ({@code inet_server_port()}).
 *
 * <p>Thread-safe. {@link #close()} stops accepting and closes every relayed connection.
 */
public final class TcpRelay implements AutoCloseable {
    private volatile List<Node> servers;
    private final ServerSocket listener;
    private final AtomicInteger next = new AtomicInteger();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final String database;
    private volatile boolean closed;

    /**
     * Starts a relay over {@code servers} (in this order, round robin) for the database {@code database}.
     *
     * @throws UncheckedIOException if no loopback port can be bound
     */
    public TcpRelay(List<Node> servers, String database) {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("a relay needs at least one server");
        }
        this.servers = List.copyOf(servers);
        this.database = database;
        try {
            this.listener = new ServerSocket();
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not bind a loopback port for the relay", e);
        }
        final Thread acceptor = new Thread(this::accept, "tcp-relay-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The relay's port on the loopback address. */
    public int port() {
        return listener.getLocalPort();
    }

    /** A JDBC URL that reaches the relay's servers through it. */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port() + "/" + database;
    }

    /** The servers behind the relay, in the order it hands connections to them. */
    public List<Node> servers() {
        return servers;
    }

    /**
     * Hands new connections to {@code servers} from now on, as a failover manager re-points a
     * Service or a DNS name to a new primary; connections relayed before stay where they are.
     */
    public void repoint(List<Node> servers) {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("a relay needs at least one server");
        }
        this.servers = List.copyOf(servers);
    }

    private void accept() {
        while (!closed) {
            final Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            final List<Node> now = servers;
            final Node server = now.get(Math.floorMod(next.getAndIncrement(), now.size()));
            try {
                final Socket upstream = new Socket(InetAddress.getLoopbackAddress(), server.port());
                open.add(client);
                open.add(upstream);
                pump(client, upstream, "to " + server.name());
                pump(upstream, client, "from " + server.name());
            } catch (IOException e) {
                // The server is down: the client sees its connection closed, as behind a real balancer.
                closeQuietly(client);
            }
        }
    }

    private void pump(Socket from, Socket to, String direction) {
        final Thread thread = new Thread(
                () -> {
                    final byte[] buffer = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buffer)) >= 0) {
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    } catch (IOException ignored) {
                        // either side closed
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                "tcp-relay-" + port() + "-" + direction);
        thread.setDaemon(true);
        thread.start();
    }

    private void closeQuietly(Socket socket) {
        open.remove(socket);
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    /** Stops accepting connections and closes every relayed one. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // already closed
        }
        for (Socket socket : List.copyOf(open)) {
            closeQuietly(socket);
        }
    }

    @Override
    public String toString() {
        return "TcpRelay[127.0.0.1:" + port() + " -> " + servers + "]";
    }
}
