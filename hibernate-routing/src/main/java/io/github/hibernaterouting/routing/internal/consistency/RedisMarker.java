package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.internal.Masking;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared mutation marker in Redis: {@code <prefix>:replication:<actor>}, holding the WAL position
 * the actor must see ({@code P} while a mutation has started but not yet committed), with an expiry.
 *
 * <p>Every instance of the application shares it, so an actor's write through one instance is
 * respected by reads through another. Failure rules: a failed read means "use the
 * primary"; a failed store before a mutation rejects the mutation; every command times out after
 * the configured timeout (1 s by default). The connection is made lazily and re-made after Redis
 * comes back, at most one attempt per timeout period. Thread-safe.
 */
public final class RedisMarker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RedisMarker.class);
    static final String PENDING = "P";
    /** Raises the marker to a later position, never lowers it; positions are 16 lower-case hex digits. */
    private static final String RAISE = """
			local current = redis.call('GET', KEYS[1])
			if (not current) or current == 'P' or current < ARGV[1] then
			  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
			else
			  redis.call('PEXPIRE', KEYS[1], ARGV[2])
			end
			return 1""";

    /**
     * Reads a marker, unless Redis lost its data recently. {@code <prefix>:alive} holds the time (by
     * Redis's clock) it was created; it is missing after Redis restarted empty or was flushed, and
     * then markers of writes made just before may be gone. For one window after the key is
     * (re)created, every actor's reads go to the primary ('R'); after that, lost markers would have
     * expired anyway.
     */
    private static final String READ = """
			local t = redis.call('TIME')
			local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
			local alive = redis.call('GET', KEYS[2])
			if not alive then
			  redis.call('SET', KEYS[2], tostring(now), 'NX')
			  return 'R'
			end
			if now - tonumber(alive) < tonumber(ARGV[1]) then
			  return 'R'
			end
			local value = redis.call('GET', KEYS[1])
			if not value then
			  return ''
			end
			return value""";

    static final String RECENTLY_RESET = "R";
    /** Creates the liveness key if missing, with Redis's time: at bootstrap, so the start-up window begins there. */
    private static final String INIT = """
			local t = redis.call('TIME')
			redis.call('SET', KEYS[1], tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)), 'NX')
			return 1""";

    /** The marker could not be read or written. */
    public static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final ClientResources resources;
    private final RedisClient client;
    private final String prefix;
    private final long windowMillis;
    private final long retryNanos;
    private final String maskedUri;
    private volatile StatefulRedisConnection<String, String> connection;
    private volatile long lastAttempt;
    private volatile boolean closed;

    public RedisMarker(String uri, String prefix, Duration window, Duration timeout) {
        final RedisURI redisUri = RedisURI.create(uri);
        redisUri.setTimeout(timeout);
        // Reconnect within a second of Redis coming back (Lettuce's default backs off to 30 s).
        this.resources = ClientResources.builder()
                .reconnectDelay(
                        Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                .build();
        this.client = RedisClient.create(resources, redisUri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                // Fail at once while disconnected instead of queueing: the caller then uses the primary.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
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
            connection().sync().eval(INIT, ScriptOutputType.INTEGER, new String[] {aliveKey()});
        } catch (RedisException e) {
            LOG.warn(
                    "Redis at {} is unreachable at startup ({}); actors' reads use the primary and their mutations "
                            + "are refused until it answers",
                    maskedUri,
                    e.getMessage());
        }
    }

    String key(String actor) {
        return prefix + ":replication:" + actor;
    }

    String aliveKey() {
        return prefix + ":alive";
    }

    /** Marks that {@code actor} has a mutation in flight: its reads use the primary until it commits. */
    void markPending(String actor) throws Unavailable {
        try {
            connection().sync().set(key(actor), PENDING, SetArgs.Builder.px(windowMillis));
        } catch (RedisException e) {
            throw unavailable("store", e);
        }
    }

    /** Raises {@code actor}'s marker to {@code lsn} (never lowers it) and restarts its window. */
    void raise(String actor, long lsn) throws Unavailable {
        try {
            connection()
                    .sync()
                    .eval(
                            RAISE,
                            ScriptOutputType.INTEGER,
                            new String[] {key(actor)},
                            hex(lsn),
                            Long.toString(windowMillis));
        } catch (RedisException e) {
            throw unavailable("raise", e);
        }
    }

    /**
     * The position {@code actor}'s reads must reflect: {@link Lsn#UNKNOWN} without a marker,
     * {@link ActorStamps#PRIMARY_ONLY} while a mutation is pending.
     */
    long read(String actor) throws Unavailable {
        final String value;
        try {
            value = connection()
                    .sync()
                    .eval(
                            READ,
                            ScriptOutputType.VALUE,
                            new String[] {key(actor), aliveKey()},
                            Long.toString(windowMillis));
        } catch (RedisException e) {
            throw unavailable("read", e);
        }
        if (value == null || value.isEmpty()) {
            return Lsn.UNKNOWN;
        }
        if (PENDING.equals(value) || RECENTLY_RESET.equals(value)) {
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

    private StatefulRedisConnection<String, String> connection() {
        final StatefulRedisConnection<String, String> current = connection;
        if (current != null) {
            return current;
        }
        synchronized (this) {
            if (connection != null) {
                return connection;
            }
            if (closed) {
                throw new RedisException("closed");
            }
            // While Redis is down, try to connect at most once per timeout period; fail fast between.
            if (System.nanoTime() - lastAttempt < retryNanos) {
                throw new RedisException("Redis was unreachable moments ago; not retrying yet");
            }
            lastAttempt = System.nanoTime();
            connection = client.connect();
            LOG.info("Connected to Redis at {} for the mutation marker", maskedUri);
            return connection;
        }
    }

    private Unavailable unavailable(String what, RedisException e) {
        return new Unavailable(
                "Could not " + what + " the mutation marker in Redis at " + maskedUri + ": " + e.getMessage(), e);
    }

    @Override
    public void close() {
        closed = true;
        final StatefulRedisConnection<String, String> current = connection;
        if (current != null) {
            current.close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
