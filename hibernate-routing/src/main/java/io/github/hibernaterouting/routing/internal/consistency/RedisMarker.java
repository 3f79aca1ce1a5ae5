package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.internal.Masking;
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
 * {@code run_id} cannot be learned is not used: the marker counts as unavailable. Thread-safe.
 */
public final class RedisMarker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RedisMarker.class);
    /** What the read script answers while a mutation is pending; also an older version's pending marker. */
    static final String PENDING = "P";

    /** Lua: {@code now}, Redis's clock in milliseconds. */
    private static final String NOW = """
			local t = redis.call('TIME')
			local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
			""";

    /**
     * Lua: whether Redis lost its data recently, by {@code <prefix>:alive} (a hash: {@code run_id},
     * the Redis process that created it, and {@code since}, when, by Redis's clock). It is missing
     * after Redis restarted empty or was flushed, and names another process after a restore from a
     * backup or a failover, which keep it: then markers of writes made just before may be gone, and
     * it is made again, naming this process. For one window after that, every actor's reads go to the
     * primary; after it, lost markers would have expired anyway.
     */
    private static final String RECENTLY_RESET = """
			local function recently_reset(key, run_id, window)
			  local since = nil
			  if redis.call('TYPE', key).ok == 'hash' then
			    local alive = redis.call('HMGET', key, 'run_id', 'since')
			    if alive[1] == run_id then
			      since = tonumber(alive[2])
			    end
			  end
			  if not since then
			    redis.call('DEL', key)
			    redis.call('HSET', key, 'run_id', run_id, 'since', tostring(now))
			    return true
			  end
			  return now - since < window
			end
			""";

    /**
     * Lua: {@code as_hash} turns a marker an older version of the library wrote (a string: {@code P}
     * for a pending mutation, or a position) into this layout, keeping what it said; {@code prune}
     * removes pending fields that no longer count.
     */
    private static final String MARKER = """
			local function as_hash(key, window)
			  if redis.call('TYPE', key).ok ~= 'string' then
			    return
			  end
			  local value = redis.call('GET', key)
			  local ttl = redis.call('PTTL', key)
			  if ttl < 0 then
			    ttl = window
			  end
			  redis.call('DEL', key)
			  if value == 'P' then
			    redis.call('HSET', key, 'pending:older-version', tostring(now + ttl))
			  elseif string.len(value) == 16 and not string.find(value, '[^0-9a-f]') then
			    redis.call('HSET', key, 'lsn', value)
			  end
			end
			local function prune(key)
			  local fields = redis.call('HGETALL', key)
			  for i = 1, #fields, 2 do
			    if string.sub(fields[i], 1, 8) == 'pending:' and (tonumber(fields[i + 1]) or 0) <= now then
			      redis.call('HDEL', key, fields[i])
			    end
			  end
			end
			""";

    /** Adds one pending mutation. KEYS: marker; ARGV: the mutation's id, window. */
    private static final String STORE = NOW + MARKER + """
			local window = tonumber(ARGV[2])
			as_hash(KEYS[1], window)
			prune(KEYS[1])
			redis.call('HSET', KEYS[1], 'pending:' .. ARGV[1], tostring(now + window))
			redis.call('PEXPIRE', KEYS[1], window)
			return 1""";

    /**
     * After a commit: removes the committed mutations' own pending fields, raises {@code lsn} (never
     * lowers it; positions are 16 lower-case hex digits, so they compare as strings) and restarts the
     * window. KEYS: marker; ARGV: position, window, then the ids of the pending fields to remove.
     */
    private static final String RAISE = NOW + MARKER + """
			local window = tonumber(ARGV[2])
			as_hash(KEYS[1], window)
			for i = 3, #ARGV do
			  redis.call('HDEL', KEYS[1], 'pending:' .. ARGV[i])
			end
			prune(KEYS[1])
			local current = redis.call('HGET', KEYS[1], 'lsn')
			if (not current) or current < ARGV[1] then
			  redis.call('HSET', KEYS[1], 'lsn', ARGV[1])
			end
			redis.call('PEXPIRE', KEYS[1], window)
			return 1""";

    /**
     * Reads a marker: 'R' if Redis lost its data recently, 'P' while a pending field counts, else the
     * position ('' for none). KEYS: marker, alive; ARGV: window, run id.
     */
    private static final String READ = NOW + RECENTLY_RESET + """
			if recently_reset(KEYS[2], ARGV[2], tonumber(ARGV[1])) then
			  return 'R'
			end
			local kind = redis.call('TYPE', KEYS[1]).ok
			if kind == 'none' then
			  return ''
			end
			if kind == 'string' then
			  return redis.call('GET', KEYS[1])
			end
			if kind ~= 'hash' then
			  return 'P'
			end
			local fields = redis.call('HGETALL', KEYS[1])
			local lsn = ''
			for i = 1, #fields, 2 do
			  if fields[i] == 'lsn' then
			    lsn = fields[i + 1]
			  elseif string.sub(fields[i], 1, 8) == 'pending:' and (tonumber(fields[i + 1]) or 0) > now then
			    return 'P'
			  end
			end
			return lsn""";

    static final String RECENTLY_RESET_REPLY = "R";

    /** Makes the alive key if it is missing or names another process: at bootstrap, so the start-up window begins there. */
    private static final String INIT = NOW + RECENTLY_RESET + """
			recently_reset(KEYS[1], ARGV[1], 0)
			return 1""";

    /** The marker could not be read or written. */
    public static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String message, Throwable cause) {
            super(message, cause);
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
    private volatile Link link;
    private volatile long lastAttempt;
    private volatile boolean closed;

    public RedisMarker(String uri, String prefix, Duration window, Duration timeout) {
        final RedisURI redisUri = RedisURI.create(uri);
        redisUri.setTimeout(timeout);
        this.resources = ClientResources.builder().build();
        this.client = RedisClient.create(resources, redisUri);
        client.setOptions(ClientOptions.builder()
                // A connection stays with one Redis process, the one whose run id it learned: no silent
                // reconnection, no move to another endpoint. After it broke, the next command makes a new one.
                .autoReconnect(false)
                .maintNotificationsConfig(MaintNotificationsConfig.disabled())
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
                            .eval(INIT, ScriptOutputType.INTEGER, new String[] {aliveKey()}, l.runId()));
        } catch (Unavailable e) {
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
                                STORE,
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
                l -> l.connection().sync().eval(RAISE, ScriptOutputType.INTEGER, new String[] {key(actor)}, args));
    }

    /**
     * The position {@code actor}'s reads must reflect: {@link Lsn#UNKNOWN} without a marker,
     * {@link ActorStamps#PRIMARY_ONLY} while a mutation is pending or for a window after Redis lost
     * its data.
     */
    long read(String actor) throws Unavailable {
        final String value = call(
                "read",
                l -> l.connection()
                        .sync()
                        .eval(
                                READ,
                                ScriptOutputType.VALUE,
                                new String[] {key(actor), aliveKey()},
                                Long.toString(windowMillis),
                                l.runId()));
        if (value == null || value.isEmpty()) {
            return Lsn.UNKNOWN;
        }
        if (PENDING.equals(value) || RECENTLY_RESET_REPLY.equals(value)) {
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
        synchronized (this) {
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
            link = new Link(connection, runId);
            LOG.info("Connected to Redis at {} (run_id {}) for the mutation marker", maskedUri, runId);
            return link;
        }
    }

    /** Closes a connection that broke, unless it was replaced already; the next command makes a new one. */
    private synchronized void drop(Link broken) {
        if (link == broken) {
            link = null;
        }
        broken.connection().closeAsync();
    }

    private Unavailable unavailable(String what, RedisException e) {
        return new Unavailable(
                "Could not " + what + " the mutation marker in Redis at " + maskedUri + ": " + e.getMessage(), e);
    }

    /** The {@code run_id} line of {@code INFO server}: the Redis process, new at every start. */
    static String runId(String info) {
        if (info == null) {
            return null;
        }
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("run_id:")) {
                final String id = line.substring("run_id:".length()).trim();
                return id.isEmpty() ? null : id;
            }
        }
        return null;
    }

    @Override
    public void close() {
        final Link current;
        synchronized (this) {
            closed = true;
            current = link;
            link = null;
        }
        if (current != null) {
            current.connection().close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
