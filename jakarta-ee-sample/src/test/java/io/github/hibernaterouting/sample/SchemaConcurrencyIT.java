package io.github.hibernaterouting.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testkit.PostgresCluster;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Several instances of the sample started together on an empty database: each applies
 * {@code db/schema.sql} on the primary at the same moment. Without serialisation, two concurrent
 * {@code create table if not exists} collide in PostgreSQL's catalog ({@code duplicate key value
 * violates unique constraint "pg_type_typname_nsp_index"}), and the instance that loses does not start.
 */
class SchemaConcurrencyIT {
    private static final int ROUNDS = 12;
    private static final int INSTANCES = 4;

    private static PostgresCluster cluster;

    @BeforeAll
    static void startPrimary() {
        cluster = PostgresCluster.builder().standbys(0).start();
    }

    @AfterAll
    static void stopPrimary() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void instancesStartedTogetherOnAnEmptyDatabase_allCreateTheSchema_andTheSeedUsersOnce() throws Exception {
        final ExecutorService pool = Executors.newFixedThreadPool(INSTANCES);
        final List<String> failures = new ArrayList<>();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                final String database = "schema_race_" + round;
                try (Connection admin = cluster.adminConnection(cluster.primary());
                        Statement s = admin.createStatement()) {
                    s.execute("create database " + database + " owner " + cluster.user());
                }
                final Servers servers = servers(database);
                final CyclicBarrier together = new CyclicBarrier(INSTANCES);
                final List<Future<?>> starts = new ArrayList<>();
                for (int i = 0; i < INSTANCES; i++) {
                    starts.add(pool.submit(() -> {
                        together.await(30, TimeUnit.SECONDS);
                        Schema.apply(servers);
                        return null;
                    }));
                }
                for (Future<?> start : starts) {
                    try {
                        start.get(60, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.ExecutionException e) {
                        failures.add("round " + round + ": " + e.getCause().getMessage());
                    }
                }
                assertThat(count(database, "select count(*) from users"))
                        .as("seed users in round %d", round)
                        .isEqualTo(3);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(failures)
                .as("schema steps that failed, of %d rounds × %d instances", ROUNDS, INSTANCES)
                .isEmpty();
    }

    @Test
    void applyingTheSchemaAgain_keepsTheData() throws Exception {
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement()) {
            s.execute("create database schema_again owner " + cluster.user());
        }
        final Servers servers = servers("schema_again");
        Schema.apply(servers);
        try (Connection c =
                        java.sql.DriverManager.getConnection(servers.primaryUrl(), cluster.user(), cluster.password());
                Statement s = c.createStatement()) {
            s.execute("insert into notes (owner_id, title, body, version, created_at) values (1, 't', 'b', 0, now())");
        }
        Schema.apply(servers);
        assertThat(count("schema_again", "select count(*) from notes")).isEqualTo(1);
        assertThat(count("schema_again", "select count(*) from users")).isEqualTo(3);
    }

    private static Servers servers(String database) {
        final String url = "jdbc:postgresql://" + cluster.primary().host() + ":"
                + cluster.primary().port() + "/" + database;
        return new Servers(url, List.of(), cluster.user(), cluster.password(), null, new NodeNames(Map.of()));
    }

    private static int count(String database, String sql) throws Exception {
        try (Connection c = java.sql.DriverManager.getConnection(
                        servers(database).primaryUrl(), cluster.user(), cluster.password());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
