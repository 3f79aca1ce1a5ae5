package io.github.hibernaterouting.routing.internal.replicas;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The physical servers one configured replica has reached, and which server each of its pooled
 * connections reached. A URL that names one standby reaches one server; a load-balanced endpoint,
 * a relay or a multi-host URL reaches several, and the registry learns them from the connections
 * themselves ({@link ReplicaSet#serverOf}), each asked once when it is first borrowed.
 *
 * <p>Thread-safe. Connections are held weakly: a connection the pool closed leaves by itself.
 */
final class ServerRegistry {
    private final ConcurrentHashMap<String, BackendServer> servers = new ConcurrentHashMap<>();
    /** Physical connection (the driver's, unwrapped where a wrapper allows) to the server it reached; by identity. */
    private final Cache<Object, BackendServer> byConnection =
            Caffeine.newBuilder().weakKeys().build();

    /** {@link System#nanoTime()} when a read last borrowed a connection to learn its server ({@link #discoveryDue}). */
    private final AtomicLong discoveredAt = new AtomicLong(System.nanoTime() - Long.MAX_VALUE / 2);

    /** The server the health check's own connection reached, {@code null} before its first answer. */
    private volatile BackendServer probeServer;

    /** Whether the replica's connections have reached more than one server. */
    boolean several() {
        return servers.size() > 1;
    }

    BackendServer probeServer() {
        return probeServer;
    }

    void probeServer(BackendServer server) {
        probeServer = server;
    }

    /**
     * Whether a read may borrow a connection, although the health check's server cannot serve it, to
     * learn whether the connections reach another server: at most once every {@code intervalNanos};
     * the caller that gets {@code true} takes the turn.
     */
    boolean discoveryDue(long intervalNanos) {
        final long last = discoveredAt.get();
        final long now = System.nanoTime();
        return now - last >= intervalNanos && discoveredAt.compareAndSet(last, now);
    }

    /** The server {@code key} names, registered now if it is new. */
    BackendServer server(String key, String address, int port) {
        return servers.computeIfAbsent(key, k -> new BackendServer(k, address, port));
    }

    /** The server {@code physical} reached, if it was asked before; {@code null} if not. */
    BackendServer known(Connection physical) {
        return byConnection.getIfPresent(identity(physical));
    }

    void remember(Connection physical, BackendServer server) {
        byConnection.put(identity(physical), server);
    }

    /** The known servers, by address and port. */
    List<BackendServer> servers() {
        final List<BackendServer> all = new ArrayList<>(servers.values());
        all.sort(Comparator.comparing(BackendServer::address).thenComparingInt(BackendServer::port));
        return all;
    }

    /**
     * Forgets servers that gave no answer for {@code nanos} (a restarted server is a new one; the old
     * entry would stay in the status forever), but never the health check's.
     */
    void forget(long nanos) {
        final BackendServer probe = probeServer;
        servers.values().removeIf(server -> server != probe && server.checkAgeNanos() > nanos);
    }

    /**
     * The object that stands for one physical connection across borrows: the driver's connection
     * where the pool's wrapper gives it out ({@code unwrap}), else the connection itself (then each
     * borrow counts as a new connection, and is asked again).
     */
    private static Object identity(Connection physical) {
        try {
            if (physical.isWrapperFor(Connection.class)) {
                return physical.unwrap(Connection.class);
            }
        } catch (SQLException | RuntimeException e) {
            // A wrapper that cannot say: take the connection as it is.
        }
        return physical;
    }
}
