package io.github.hibernaterouting.benchmarks.workload;

import io.github.hibernaterouting.testkit.PostgresCluster;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * The database of the overhead workload, shared by {@link OverheadBenchmark} and
 * {@link SplitControl}: its tables and rows, and a second address of the same server for the
 * replica side.
 */
final class WorkloadDatabase {
    private WorkloadDatabase() {}

    /**
     * Creates and fills the tables of {@link Item} and {@link ItemEvent} ({@link OverheadWorker#ITEMS}
     * items) and waits until every standby has them.
     */
    static void seed(PostgresCluster cluster) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute(
                    "create table item (id bigint primary key, name text, qty int not null, version bigint not null)");
            s.execute("create sequence item_event_seq start 1 increment 50");
            s.execute("create table item_event (id bigint primary key, item_id bigint not null, text text)");
            s.execute("insert into item select i, 'item-' || i, 0, 0 from generate_series(1, " + OverheadWorker.ITEMS
                    + ") i");
            s.execute("vacuum analyze item");
        }
        cluster.awaitCaughtUp(Duration.ofSeconds(60));
    }

    /** The same server under another address: {@code localhost} for {@code 127.0.0.1}. */
    static String sameServer(String primaryUrl) {
        final String sameServer = primaryUrl.replace("//127.0.0.1:", "//localhost:");
        if (sameServer.equals(primaryUrl)) {
            throw new IllegalStateException("expected a 127.0.0.1 URL: " + primaryUrl);
        }
        return sameServer;
    }
}
