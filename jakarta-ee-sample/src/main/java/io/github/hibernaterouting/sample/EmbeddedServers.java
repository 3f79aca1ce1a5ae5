package io.github.hibernaterouting.sample;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A PostgreSQL primary with two streaming replicas and a Redis, all on 127.0.0.1, started by the
 * project's test kit for the launcher and the tests. {@link #close()} stops them and deletes their
 * files. Not thread-safe.
 */
public final class EmbeddedServers implements AutoCloseable {
    private final PostgresCluster cluster;
    private final RedisServer redis;
    private final Servers servers;

    private EmbeddedServers(PostgresCluster cluster, RedisServer redis) {
        this.cluster = cluster;
        this.redis = redis;
        // The library names replicas by their position in replica_urls: replica1, replica2.
        final Map<Integer, String> names = new HashMap<>();
        names.put(cluster.primary().port(), "primary");
        final List<Node> standbys = cluster.standbys();
        for (int i = 0; i < standbys.size(); i++) {
            names.put(standbys.get(i).port(), "replica" + (i + 1));
        }
        this.servers = new Servers(
                cluster.primary().jdbcUrl(),
                standbys.stream().map(Node::jdbcUrl).toList(),
                cluster.user(),
                cluster.password(),
                redis.uri(),
                new NodeNames(names));
    }

    /** Starts the cluster, then Redis; if Redis fails, the cluster is stopped again. */
    public static EmbeddedServers start() {
        final PostgresCluster cluster = PostgresCluster.builder().standbys(2).start();
        try {
            return new EmbeddedServers(cluster, RedisServer.start());
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** The servers, for the web application. */
    public Servers servers() {
        return servers;
    }

    /** The PostgreSQL cluster, for tests that pause replay. */
    public PostgresCluster cluster() {
        return cluster;
    }

    /** The Redis server. */
    public RedisServer redis() {
        return redis;
    }

    /** Stops Redis and the cluster and deletes their files; idempotent. */
    @Override
    public void close() {
        try {
            redis.close();
        } finally {
            cluster.close();
        }
    }
}
