package io.github.hibernaterouting.routing.internal.consistency;

/**
 * The Lua scripts of the Redis marker ({@link RedisMarker}), and what they answer. Plain
 * {@code EVAL} scripts, for Redis 6.2 and newer (no Redis 7 functions); each runs atomically.
 *
 * <p>Keys: {@code <prefix>:replication:<actor>}, a hash of {@code lsn} (16 lower-case hex digits,
 * so positions compare as strings) and {@code pending:<id>} fields (when each stops counting, by
 * Redis's clock in ms), expiring one window after it was last written; and {@code <prefix>:alive},
 * a hash of {@code run_id} and {@code since}.
 */
final class MarkerScripts {
    private MarkerScripts() {}

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
    static final String STORE = NOW + MARKER + """
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
    static final String RAISE = NOW + MARKER + """
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
     * Removes one pending field of a mutation that ended without a commit (ARGV: window, id), and
     * the pending fields that no longer count; keeps the position and the expiry. KEYS: marker.
     */
    static final String END = NOW + MARKER + """
			as_hash(KEYS[1], tonumber(ARGV[1]))
			redis.call('HDEL', KEYS[1], 'pending:' .. ARGV[2])
			prune(KEYS[1])
			return 1""";

    /**
     * Reads a marker: 'R' if Redis lost its data recently, 'P' while a pending field counts, else the
     * position ('' for none). KEYS: marker, alive; ARGV: window, run id.
     */
    static final String READ = NOW + RECENTLY_RESET + """
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
    static final String INIT = NOW + RECENTLY_RESET + """
			recently_reset(KEYS[1], ARGV[1], 0)
			return 1""";
}
