package io.github.hibernaterouting.sample.quarkus;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.RedisServer;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;
import java.util.stream.Collectors;

/**
 * The sample's launcher. Unless {@code quarkus.datasource.jdbc.url} (or {@code QUARKUS_DATASOURCE_JDBC_URL})
 * names your own primary, it starts an embedded PostgreSQL primary with two streaming replicas and a Redis on
 * 127.0.0.1 (the project's test kit), points the application at them, and stops them when the application stops.
 */
@QuarkusMain
public class SampleMain {
    /** The embedded servers, when the launcher started them; {@code null} otherwise. */
    static volatile PostgresCluster embedded;

    public static void main(String... args) {
        if (System.getenv("QUARKUS_DATASOURCE_JDBC_URL") != null
                || System.getProperty("quarkus.datasource.jdbc.url") != null) {
            Quarkus.run(args);
            return;
        }
        final PostgresCluster cluster = PostgresCluster.builder().standbys(2).start();
        final RedisServer redis;
        try {
            redis = RedisServer.start();
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        embedded = cluster;
        System.setProperty("quarkus.datasource.jdbc.url", cluster.primary().jdbcUrl());
        System.setProperty("quarkus.datasource.username", cluster.user());
        System.setProperty("quarkus.datasource.password", cluster.password());
        System.setProperty(
                "quarkus.hibernate-routing.replica-urls",
                cluster.standbys().stream().map(Node::jdbcUrl).collect(Collectors.joining(",")));
        System.setProperty("quarkus.hibernate-routing.redis-uri", redis.uri());
        try {
            Quarkus.run(args);
        } finally {
            redis.close();
            cluster.close();
        }
    }
}
