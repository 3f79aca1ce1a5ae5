package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.sql.internal.Masking;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.MaintNotificationsConfig;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
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
 * the configured timeout (1 s by default). A command that times out drops its connection: a Redis
 * that hangs with its socket open (a paused process, a partition) is left, and the next connection
 * asks again where Redis is (a Sentinel names the master it promoted meanwhile). A
 * {@link MarkerBreaker} in front of the commands makes an outage cost one timeout per period, not
 * one per request; an outage is logged once as it begins (WARN) and once as it ends (INFO), the
 * commands failed in between at DEBUG.
 *
 * <p>Markers lost by Redis (a restart without persistence, a flush, a restore from a backup, a
 * failover to a replica that was behind) are noticed through {@code <prefix>:alive}: it names the
 * Redis process ({@code run_id}) that created it and when. Each connection learns the {@code run_id}
 * of the process at its other end ({@code INFO server}) before it is used, so the two always belong
 * together: the connection is the library's own, made lazily and made again after it broke or
 * timed out (by one thread, while the others fail at once), never silently reconnected elsewhere.
 * A connection whose {@code run_id} cannot be learned is not used: the marker counts as
 * unavailable.
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

        private final boolean outage;

        Unavailable(String message, Throwable cause, boolean outage) {
            super(message, cause);
            this.outage = outage;
        }

        /**
         * Whether Redis is down or hangs, an outage that the marker logs itself, once as it begins and
         * once as it ends: a caller logs this failure at DEBUG, not once per request. An error reply of
         * Redis is not an outage.
         */
        public boolean outage() {
            return outage;
        }
    }

    /** A connection, and the run id of the Redis process at its other end, learned before the connection was used. */
    private record Link(StatefulRedisConnection<String, String> connection, String runId) {}

    private final ClientResources resources;
    private final RedisClient client;
    private final String prefix;
    private final long windowMillis;
    private final String maskedUri;
    private final MarkerBreaker breaker;
    private final MarkerOutage outage;
    private final RoutingMetrics metrics;
    /** Makes the ids of pending mutations unique across instances: random per instance, then a counter. */
    private final String idPrefix = String.format(Locale.ROOT, "%016x-", new SecureRandom().nextLong());

    private final AtomicLong ids = new AtomicLong();
    /** Held by the one thread that makes a connection; the others fail at once rather than wait for it. */
    private final ReentrantLock connecting = new ReentrantLock();

    /** Whether the Lettuce on the class path is 7 or newer, which has maintenance notifications. */
    private static final boolean LETTUCE_7 =
            RedisMarker.class.getClassLoader().getResource("io/lettuce/core/MaintNotificationsConfig.class") != null;

    private final AtomicReference<Link> link = new AtomicReference<>();

    private volatile boolean closed;
    private volatile boolean clusterLogged;

    /** A marker whose meters go nowhere, for tests and tools. */
    RedisMarker(String uri, String prefix, Duration window, Duration timeout) {
        this(uri, prefix, window, timeout, new RoutingMetrics(new SimpleMeterRegistry(), "default", List.of()));
    }

    /**
     * Connects to Redis at {@code uri} now (a Redis that does not answer is not fatal: see the class comment).
     *
     * @param timeout of every command and connection attempt, and how long the breaker stays open
     * @throws io.github.hibernaterouting.routing.RoutingConfigurationException if Redis runs in cluster mode
     */
    public RedisMarker(String uri, String prefix, Duration window, Duration timeout, RoutingMetrics metrics) {
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
        this.maskedUri = Masking.url(uri);
        // Open for one timeout: a Redis back from an outage is used again within about a second, and one that
        // is still down costs a thread one timeout per period.
        this.breaker = new MarkerBreaker(timeout.toNanos(), System::nanoTime);
        this.outage = new MarkerOutage(breaker, maskedUri);
        this.metrics = metrics;
        metrics.redisCircuit(breaker, MarkerBreaker::state);
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
            if (e.getCause() instanceof RedisInfo.ClusterRefused refused) {
                close();
                throw RoutingConfigurationException.withMessage(RoutingSettings.REDIS_URI, refused.getMessage());
            }
            // Logged by call() as the start of an outage.
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

    /**
     * Runs {@code command} on the current connection (made now if needed), unless the breaker is open.
     * A connection that broke or timed out is dropped, so that the next command connects anew.
     */
    private <T> T call(String what, Function<Link, T> command) throws Unavailable {
        if (!breaker.allows()) {
            metrics.redisRejected();
            // A cause of Lettuce's type, as for any other failure, saying what the last one was.
            throw unavailable(what, new RedisException(outage.rejected(what)), true);
        }
        Link current = null;
        final T result;
        try {
            current = link();
            result = command.apply(current);
        } catch (RedisInfo.Busy e) {
            // Not Redis's failure: another thread is connecting, which settles the breaker. Were this the
            // probe, the next command probes instead.
            breaker.probeSkipped();
            throw unavailable(what, e, outage.ongoing());
        } catch (RedisException e) {
            if (e instanceof RedisCommandExecutionException && !readOnly(e)) {
                // An error reply: Redis answers, over a connection that works.
                outage.ended();
                throw unavailable(what, e, false);
            }
            if (current != null) {
                drop(current);
            }
            outage.began(what, e);
            throw unavailable(what, e, true);
        } catch (RuntimeException | Error e) {
            // Whatever it was, the probe (if this was it) must not leave the breaker half-open for ever.
            breaker.failed();
            throw e;
        }
        outage.ended();
        return result;
    }

    /**
     * Whether Redis refused a write because it is a replica: the connection reached a master that
     * was demoted since (a failover); a new one asks the Sentinels again.
     */
    private static boolean readOnly(RedisException e) {
        return e.getMessage() != null && e.getMessage().startsWith("READONLY");
    }

    private Link link() {
        final Link current = link.get();
        if (current != null && current.connection().isOpen()) {
            return current;
        }
        if (current != null) {
            drop(current);
        }
        // A lock, not a monitor: the thread that connects waits here up to the timeout while Redis is unreachable,
        // and a virtual thread holding a monitor there would pin its carrier (JDK 21 to 23). The others do not
        // wait for it: a request that needs the marker meanwhile fails at once.
        if (!connecting.tryLock()) {
            throw new RedisInfo.Busy();
        }
        try {
            final Link made = link.get();
            if (made != null && made.connection().isOpen()) {
                return made;
            }
            if (closed) {
                throw new RedisException("closed");
            }
            final StatefulRedisConnection<String, String> connection = client.connect();
            final String runId;
            try {
                runId = RedisInfo.runId(connection.sync().info("server"));
            } catch (RuntimeException e) {
                connection.closeAsync();
                throw e;
            }
            if (runId == null) {
                connection.closeAsync();
                throw new RedisException("its INFO server names no run_id, without which a restore or a failover "
                        + "that lost markers would go unnoticed");
            }
            final String cluster = RedisInfo.clusterMode(connection, maskedUri);
            if (cluster != null) {
                connection.closeAsync();
                if (!clusterLogged) {
                    clusterLogged = true;
                    LOG.error("{}; actors' reads use the primary and their mutations are refused", cluster);
                }
                throw new RedisInfo.ClusterRefused(cluster);
            }
            final Link fresh = new Link(connection, runId);
            link.set(fresh);
            if (closed && link.compareAndSet(fresh, null)) {
                // close() ran meanwhile and missed it.
                connection.closeAsync();
                throw new RedisException("closed");
            }
            LOG.info("Connected to Redis at {} (run_id {}) for the mutation marker", maskedUri, runId);
            RedisInfo.warnIfEvicting(connection, maskedUri);
            return fresh;
        } finally {
            connecting.unlock();
        }
    }

    /**
     * Closes a connection that broke or timed out, unless it was replaced already; the next command
     * makes a new one. A connection that timed out is closed too: commands sent on it may still be
     * answered, but a Redis that hangs may never answer, and a connection to the Redis it was is kept
     * by nothing else.
     */
    private void drop(Link broken) {
        link.compareAndSet(broken, null);
        broken.connection().closeAsync();
    }

    private Unavailable unavailable(String what, RedisException e, boolean outage) {
        return new Unavailable(
                "Could not " + what + " the mutation marker in Redis at " + maskedUri + ": "
                        + Masking.text(e.getMessage()),
                e,
                outage);
    }

    /** The {@code run_id} line of {@code INFO server}: the Redis process, new at every start. */
    static String runId(String info) {
        return RedisInfo.runId(info);
    }

    @Override
    public void close() {
        closed = true;
        final Link current = link.getAndSet(null);
        if (current != null) {
            current.connection().close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
