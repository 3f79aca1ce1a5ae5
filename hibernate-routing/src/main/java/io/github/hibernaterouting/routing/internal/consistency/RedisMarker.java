package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.sql.internal.Masking;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.MaintNotificationsConfig;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared mutation marker in Redis: {@code <prefix>:replication:<actor>}, a hash holding the WAL
 * position the actor must see ({@code lsn}: the latest committed one, 16 hex digits) and one field
 * per mutation that has started but whose position is not there yet ({@code pending:<id>}: when it
 * stops counting, by Redis's clock). Each store or raise restarts the key's window (its expiry).
 * While any pending field counts, the actor's reads use the primary. A mutation's raise removes its
 * own pending field only, so concurrent mutations of one actor never clear each other's.
 *
 * <p>Every instance of the application shares it, so an actor's write through one instance is
 * respected by reads through another. Failure rules: a failed read means "use the
 * primary"; a failed store before a mutation rejects the mutation; every command times out after
 * the configured timeout (1 s by default).
 *
 * <p>Markers lost by Redis (a restart without persistence, a flush, a restore from a backup, a
 * failover to a replica that was behind) are noticed through {@code <prefix>:alive}: it names the
 * Redis process ({@code run_id}) that created it and when. Each connection learns the {@code run_id}
 * of the process at its other end ({@code INFO server}) before it is used, so the two always belong
 * together: the connection is the library's own, made lazily and made again after it broke (at
 * most one attempt per timeout period), never silently reconnected elsewhere. A connection whose
 * {@code run_id} cannot be learned is not used: the marker counts as unavailable.
 *
 * <p>Redis Cluster is refused: the scripts touch the marker and the alive key together, which a
 * cluster only allows within one hash slot. Each connection reads {@code INFO cluster} before use;
 * a cluster fails the bootstrap, or, noticed later (Redis was down at bootstrap), makes the marker
 * count as unavailable, with an error saying why. Thread-safe.
 */
public final class RedisMarker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RedisMarker.class);

    /** The marker could not be read or written. */
    public static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A Redis in cluster mode: the marker refuses it, whenever it is noticed. */
    static final class ClusterRefused extends RedisException {
        private static final long serialVersionUID = 1L;

        ClusterRefused(String message) {
            super(message);
        }
    }

    /** A connection, and the run id of the Redis process at its other end, learned before the connection was used. */
    private record Link(StatefulRedisConnection<String, String> connection, String runId) {}

    private final ClientResources resources;
    private final RedisClient client;
    private final String prefix;
    private final long windowMillis;
    private final long retryNanos;
    private final String maskedUri;
    /** Makes the ids of pending mutations unique across instances: random per instance, then a counter. */
    private final String idPrefix = String.format(Locale.ROOT, "%016x-", new SecureRandom().nextLong());

    private final AtomicLong ids = new AtomicLong();
    /** Held while the connection is made or replaced. */
    private final ReentrantLock connecting = new ReentrantLock();

    /** Whether the Lettuce on the class path is 7 or newer, which has maintenance notifications. */
    private static final boolean LETTUCE_7 =
            RedisMarker.class.getClassLoader().getResource("io/lettuce/core/MaintNotificationsConfig.class") != null;

    private volatile Link link;
    private volatile long lastAttempt;
    private volatile boolean closed;
    private volatile boolean clusterLogged;

    public RedisMarker(String uri, String prefix, Duration window, Duration timeout) {
        final RedisURI redisUri = RedisURI.create(uri);
        redisUri.setTimeout(timeout);
        this.resources = ClientResources.builder().build();
        this.client = RedisClient.create(resources, redisUri);
        final ClientOptions.Builder options = ClientOptions.builder()
                // A connection stays with one Redis process, the one whose run id it learned: no silent
                // reconnection, no move to another endpoint. After it broke, the next command makes a new one.
                .autoReconnect(false);
        if (LETTUCE_7) {
            // Lettuce 7 follows a Redis maintenance notification to another endpoint; Lettuce 6 (for Netty 4.1, as
            // Quarkus 3 ships) has no such option.
            options.maintNotificationsConfig(MaintNotificationsConfig.disabled());
        }
        client.setOptions(options
                // Fail at once while disconnected instead of queueing: the caller then uses the primary.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .build());
        this.prefix = prefix;
        this.windowMillis = window.toMillis();
        this.retryNanos = timeout.toNanos();
        this.maskedUri = Masking.url(uri);
        this.lastAttempt = System.nanoTime() - retryNanos;
        // Connect now, at bootstrap: the first connection also loads and starts Lettuce and Netty,
        // which can take longer than a command timeout on a busy machine, and must not cost the
        // first requests their mutations. A Redis that is down now is not fatal: see the class comment.
        try {
            call(
                    "initialise",
                    l -> l.connection()
                            .sync()
                            .eval(MarkerScripts.INIT, ScriptOutputType.INTEGER, new String[] {aliveKey()}, l.runId()));
        } catch (Unavailable e) {
            if (e.getCause() instanceof ClusterRefused refused) {
                close();
                throw RoutingConfigurationException.withMessage(RoutingSettings.REDIS_URI, refused.getMessage());
            }
            LOG.warn(
                    "{}; actors' reads use the primary and their mutations are refused until it answers",
                    e.getMessage());
        }
    }

    String key(String actor) {
        return prefix + ":replication:" + actor;
    }

    String aliveKey() {
        return prefix + ":alive";
    }

    /**
     * Records that {@code actor} has a mutation in flight: its reads use the primary until the
     * mutation's position is raised with the returned id, or the window ends.
     *
     * @return the id of the mutation's pending field, for {@link #raise}
     */
    String markPending(String actor) throws Unavailable {
        final String id = idPrefix + Long.toString(ids.incrementAndGet(), 36);
        call(
                "store",
                l -> l.connection()
                        .sync()
                        .eval(
                                MarkerScripts.STORE,
                                ScriptOutputType.INTEGER,
                                new String[] {key(actor)},
                                id,
                                Long.toString(windowMillis)));
        return id;
    }

    /**
     * Raises {@code actor}'s marker to {@code lsn} (never lowers it), removes the pending fields of
     * the mutations that committed ({@code pendingIds}, from {@link #markPending}) and no other, and
     * restarts the window.
     */
    void raise(String actor, long lsn, List<String> pendingIds) throws Unavailable {
        final String[] args = new String[2 + pendingIds.size()];
        args[0] = hex(lsn);
        args[1] = Long.toString(windowMillis);
        for (int i = 0; i < pendingIds.size(); i++) {
            args[2 + i] = pendingIds.get(i);
        }
        call(
                "raise",
                l -> l.connection()
                        .sync()
                        .eval(MarkerScripts.RAISE, ScriptOutputType.INTEGER, new String[] {key(actor)}, args));
    }

    /** Removes the pending field {@code pendingId} of {@code actor}'s marker, whose mutation ended without a commit; nothing else. */
    void endPending(String actor, String pendingId) throws Unavailable {
        call(
                "end",
                l -> l.connection()
                        .sync()
                        .eval(
                                MarkerScripts.END,
                                ScriptOutputType.INTEGER,
                                new String[] {key(actor)},
                                Long.toString(windowMillis),
                                pendingId));
    }

    /**
     * The position {@code actor}'s reads must reflect: {@link Lsn#UNKNOWN} without a marker,
     * {@link ActorStamps#PENDING} while a mutation is pending, {@link ActorStamps#PRIMARY_ONLY} for a
     * window after Redis lost its data.
     */
    long read(String actor) throws Unavailable {
        final String value = call(
                "read",
                l -> l.connection()
                        .sync()
                        .eval(
                                MarkerScripts.READ,
                                ScriptOutputType.VALUE,
                                new String[] {key(actor), aliveKey()},
                                Long.toString(windowMillis),
                                l.runId()));
        if (value == null || value.isEmpty()) {
            return Lsn.UNKNOWN;
        }
        if (MarkerScripts.PENDING.equals(value)) {
            return ActorStamps.PENDING;
        }
        if (MarkerScripts.RECENTLY_RESET_REPLY.equals(value)) {
            return ActorStamps.PRIMARY_ONLY;
        }
        try {
            return Long.parseUnsignedLong(value, 16);
        } catch (NumberFormatException e) {
            // Not ours: be safe.
            return ActorStamps.PRIMARY_ONLY;
        }
    }

    static String hex(long lsn) {
        return String.format(Locale.ROOT, "%016x", lsn);
    }

    /** Runs {@code command} on the current connection (made now if needed); a connection that broke is dropped. */
    private <T> T call(String what, Function<Link, T> command) throws Unavailable {
        Link current = null;
        try {
            current = link();
            return command.apply(current);
        } catch (RedisException e) {
            if (current != null
                    && !(e instanceof RedisCommandExecutionException)
                    && !(e instanceof RedisCommandTimeoutException)) {
                drop(current);
            }
            throw unavailable(what, e);
        }
    }

    private Link link() {
        final Link current = link;
        if (current != null && current.connection().isOpen()) {
            return current;
        }
        // A lock, not a monitor: the thread that connects waits here up to the timeout while Redis is unreachable,
        // and a virtual thread holding a monitor there would pin its carrier (JDK 21 to 23), as would every
        // virtual thread waiting for it.
        connecting.lock();
        try {
            if (link != null && !link.connection().isOpen()) {
                drop(link);
            }
            if (link != null) {
                return link;
            }
            if (closed) {
                throw new RedisException("closed");
            }
            // While Redis is down, try to connect at most once per timeout period; fail fast between.
            if (System.nanoTime() - lastAttempt < retryNanos) {
                throw new RedisException("Redis was unreachable moments ago; not retrying yet");
            }
            lastAttempt = System.nanoTime();
            final StatefulRedisConnection<String, String> connection = client.connect();
            final String runId;
            try {
                runId = runId(connection.sync().info("server"));
            } catch (RuntimeException e) {
                connection.closeAsync();
                throw e;
            }
            if (runId == null) {
                connection.closeAsync();
                throw new RedisException("its INFO server names no run_id, without which a restore or a failover "
                        + "that lost markers would go unnoticed");
            }
            refuseCluster(connection);
            link = new Link(connection, runId);
            LOG.info("Connected to Redis at {} (run_id {}) for the mutation marker", maskedUri, runId);
            warnIfEvicting(connection);
            return link;
        } finally {
            connecting.unlock();
        }
    }

    /**
     * Closes {@code connection} and throws {@link ClusterRefused} if its Redis runs in cluster mode;
     * a Redis that refuses {@code INFO cluster} is taken for a standalone one, as is one that says nothing.
     */
    private void refuseCluster(StatefulRedisConnection<String, String> connection) {
        final String cluster;
        try {
            cluster = connection.sync().info("cluster");
        } catch (RedisCommandExecutionException e) {
            LOG.debug("Could not read INFO cluster of Redis at {}: {}", maskedUri, e.getMessage());
            return;
        } catch (RuntimeException e) {
            connection.closeAsync();
            throw e;
        }
        if (!"1".equals(infoField(cluster, "cluster_enabled"))) {
            return;
        }
        connection.closeAsync();
        final String message = "Redis at " + maskedUri + " (" + RoutingSettings.REDIS_URI + ") runs in cluster mode"
                + " (INFO cluster: cluster_enabled:1), which the mutation marker does not support: its scripts"
                + " read and write an actor's marker and the alive key together, which Redis Cluster allows only"
                + " within one hash slot. Use a standalone Redis, a Sentinel-managed one (redis-sentinel://), or"
                + " a managed Redis service with cluster mode disabled";
        if (!clusterLogged) {
            clusterLogged = true;
            LOG.error("{}; actors' reads use the primary and their mutations are refused", message);
        }
        throw new ClusterRefused(message);
    }

    /** Closes a connection that broke, unless it was replaced already; the next command makes a new one. */
    private void drop(Link broken) {
        connecting.lock();
        try {
            if (link == broken) {
                link = null;
            }
        } finally {
            connecting.unlock();
        }
        broken.connection().closeAsync();
    }

    private Unavailable unavailable(String what, RedisException e) {
        return new Unavailable(
                "Could not " + what + " the mutation marker in Redis at " + maskedUri + ": "
                        + Masking.text(e.getMessage()),
                e);
    }

    /** The {@code run_id} line of {@code INFO server}: the Redis process, new at every start. */
    static String runId(String info) {
        return infoField(info, "run_id");
    }

    /** The value of {@code field} in the text of an {@code INFO} reply, {@code null} if it has none. */
    static String infoField(String info, String field) {
        if (info == null) {
            return null;
        }
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                final String value = line.substring(field.length() + 1).trim();
                return value.isEmpty() ? null : value;
            }
        }
        return null;
    }

    /**
     * Says loudly, once per connection, when this Redis may evict keys: a marker evicted inside its
     * window is not noticed (the alive key, which has no TTL, survives {@code volatile-*} policies),
     * and the actor's reads then go to a replica that may lack its write. Read from {@code INFO
     * memory}, which managed Redis services answer where they refuse {@code CONFIG GET}.
     */
    private void warnIfEvicting(StatefulRedisConnection<String, String> connection) {
        final String memory;
        try {
            memory = connection.sync().info("memory");
        } catch (RuntimeException e) {
            LOG.debug("Could not read INFO memory of Redis at {}: {}", maskedUri, e.getMessage());
            return;
        }
        final String policy = infoField(memory, "maxmemory_policy");
        final String limit = infoField(memory, "maxmemory");
        if (policy != null && !policy.equals("noeviction") && limit != null && !limit.equals("0")) {
            LOG.error(
                    "Redis at {} evicts keys when full (maxmemory-policy {}, maxmemory {} bytes): a mutation marker"
                            + " evicted inside its window goes unnoticed, and the actor's reads then go to a replica"
                            + " that may not have its write yet. Give the marker a Redis with maxmemory-policy"
                            + " noeviction (a database of its own does not help: the policy is per server)",
                    maskedUri,
                    policy,
                    limit);
        }
    }

    @Override
    public void close() {
        final Link current;
        connecting.lock();
        try {
            closed = true;
            current = link;
            link = null;
        } finally {
            connecting.unlock();
        }
        if (current != null) {
            current.connection().close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
