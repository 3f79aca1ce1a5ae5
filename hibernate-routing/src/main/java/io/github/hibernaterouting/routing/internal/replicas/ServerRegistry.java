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

    /** How many times reads tried for another server ({@link #discoveryDue}), at most {@link #MAX_DISCOVERIES}. */
    private final java.util.concurrent.atomic.AtomicInteger discoveries =
            new java.util.concurrent.atomic.AtomicInteger();

    private static final int MAX_DISCOVERIES = 16;

    /** The server the health check's own connection reached, {@code null} before its first answer. */
    private volatile BackendServer probeServer;

    /** How many servers the replica's connections have reached. */
    int count() {
        return servers.size();
    }

    /** Whether the replica's connections have reached more than one server. */
    boolean several() {
        return servers.size() > 1;
    }

    BackendServer probeServer() {
        return probeServer;
    }

    /**
     * The health check's connection reached {@code server}. When that is another server than before
     * (the server restarted, which makes it a new one, or the URL's next connection reached another
     * standby), the one before is forgotten with the connections known to reach it: a restarted
     * server ended them, and a standby that still runs is learned again from the next connection
     * that reaches it. Otherwise one standby restarted would count as two servers behind its URL.
     */
    void probeServer(BackendServer server) {
        final BackendServer before = probeServer;
        probeServer = server;
        if (before != null && before != server) {
            servers.remove(before.key(), before);
            byConnection.asMap().values().removeIf(known -> known == before);
        }
    }

    /**
     * Whether a read may borrow a connection, although the health check's server cannot serve it, to
     * learn whether the connections reach another server: at most once every {@code intervalNanos},
     * and {@link #MAX_DISCOVERIES} times in all while no second server showed up (each connection is
     * still asked which server it reached when it is first borrowed, so a pool's new connections
     * find other servers anyway); the caller that gets {@code true} takes the turn.
     */
    boolean discoveryDue(long intervalNanos) {
        if (discoveries.get() >= MAX_DISCOVERIES || several()) {
            // Behind a URL with several servers, a few tries find a second one (and then each connection
            // is decided by its own); a URL that names one server stops paying for them.
            return false;
        }
        final long last = discoveredAt.get();
        final long now = System.nanoTime();
        if (now - last >= intervalNanos && discoveredAt.compareAndSet(last, now)) {
            discoveries.incrementAndGet();
            return true;
        }
        return false;
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
     * The largest lag in bytes of the servers known, as each last answered; {@code -1} (unknown) when
     * one of them has an unknown lag, or none is known yet: a server whose lag is not known may be the
     * one furthest behind.
     */
    long worstLagBytes() {
        long worst = -1;
        for (BackendServer server : servers.values()) {
            final long bytes = server.lagBytes();
            if (bytes < 0) {
                return -1;
            }
            worst = Math.max(worst, bytes);
        }
        return worst;
    }

    /** As {@link #worstLagBytes()}, in seconds behind; NaN for unknown. */
    double worstLagSeconds() {
        double worst = Double.NaN;
        for (BackendServer server : servers.values()) {
            final double seconds = server.lagSeconds();
            if (Double.isNaN(seconds)) {
                return Double.NaN;
            }
            worst = Double.isNaN(worst) ? seconds : Math.max(worst, seconds);
        }
        return worst;
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
