package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the mutation marker reads of a Redis from its {@code INFO} replies before it uses a new
 * connection (the process's run id, whether it runs in cluster mode, whether it may evict keys), and
 * the failures of its own that it raises while connecting.
 */
final class RedisInfo {
    private static final Logger LOG = LoggerFactory.getLogger(RedisMarker.class);

    private RedisInfo() {}

    /** A Redis in cluster mode: the marker refuses it, whenever it is noticed. */
    static final class ClusterRefused extends RedisException {
        private static final long serialVersionUID = 1L;

        ClusterRefused(String message) {
            super(message);
        }
    }

    /** Another thread is making the connection: this one does not wait for it. */
    static final class Busy extends RedisException {
        private static final long serialVersionUID = 1L;

        Busy() {
            super("not asked, as another thread is connecting to it");
        }
    }

    /** The {@code run_id} line of {@code INFO server}: the Redis process, new at every start. */
    static String runId(String info) {
        return infoField(info, "run_id");
    }

    /**
     * Why the marker refuses the Redis of {@code connection}, naming it by {@code maskedUri}, if it runs in
     * cluster mode; {@code null} if it does not. A Redis that refuses {@code INFO cluster} is taken for a
     * standalone one, as is one that says nothing. Closes the connection if the command fails otherwise.
     */
    static String clusterMode(StatefulRedisConnection<String, String> connection, String maskedUri) {
        final String cluster;
        try {
            cluster = connection.sync().info("cluster");
        } catch (RedisCommandExecutionException e) {
            LOG.debug("Could not read INFO cluster of Redis at {}: {}", maskedUri, e.getMessage());
            return null;
        } catch (RuntimeException e) {
            connection.closeAsync();
            throw e;
        }
        if (!"1".equals(infoField(cluster, "cluster_enabled"))) {
            return null;
        }
        return "Redis at " + maskedUri + " (" + RoutingSettings.REDIS_URI + ") runs in cluster mode"
                + " (INFO cluster: cluster_enabled:1), which the mutation marker does not support: its scripts"
                + " read and write an actor's marker and the alive key together, which Redis Cluster allows only"
                + " within one hash slot. Use a standalone Redis, a Sentinel-managed one (redis-sentinel://), or"
                + " a managed Redis service with cluster mode disabled";
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
    static void warnIfEvicting(StatefulRedisConnection<String, String> connection, String maskedUri) {
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
}
