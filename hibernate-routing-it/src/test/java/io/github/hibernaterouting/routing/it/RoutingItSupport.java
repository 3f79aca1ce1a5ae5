package io.github.hibernaterouting.routing.it;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.internal.bootstrap.RoutingRuntime;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.hibernate.cfg.AvailableSettings;

/**
 * What the library's own ITs add to {@link RoutingTestSupport}: their schema and entities, and the
 * one internal hook they use.
 */
public final class RoutingItSupport {
    /**
     * A {@link RoutingSettings#MAX_REPLICA_LAG} no test reaches, for persistence units whose tests pause replay
     * and still expect the paused standbys to serve. A standby with WAL left to replay counts its lag in seconds
     * from the last transaction it replayed, which can be from long before the pause: under the default (10 s) it
     * goes over the bound on a machine slow enough. {@code 0} (no time bound) is no better: the bound also sets how
     * old the health check's data may get before a replica counts as lag-unknown, never less than 1 s, which a
     * starved health-check thread can exceed.
     */
    public static final String LAG_BOUND_NO_TEST_REACHES = "1h";

    private RoutingItSupport() {}

    public static void createSchema(PostgresCluster cluster) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement()) {
            s.execute("drop table if exists account, note cascade");
            s.execute("drop sequence if exists account_seq, note_seq");
            s.execute("create sequence account_seq start 1 increment 50");
            s.execute("create sequence note_seq start 1 increment 50");
            s.execute(
                    "create table account (id bigint primary key, name text, balance int not null, version bigint not null)");
            s.execute("create table note (id bigint primary key, text text)");
        }
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    /**
     * A persistence unit "routing-it" with {@link Account} and {@link Note} and the shared test
     * settings ({@link RoutingTestSupport#settings}), without a second-level cache; {@code overrides}
     * win, null values remove.
     */
    public static EntityManagerFactory emf(PostgresCluster cluster, Map<String, ?> overrides) {
        return RoutingTestSupport.emf("routing-it", cluster, withoutCache(overrides), Account.class, Note.class);
    }

    /**
     * {@code overrides}, switching the second-level cache off unless they say otherwise: the module's
     * test class path has a cache provider (for {@code SecondLevelCacheIT}), which Hibernate would
     * otherwise pick up on its own.
     */
    static Map<String, Object> withoutCache(Map<String, ?> overrides) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, "false");
        settings.putAll(overrides);
        return settings;
    }

    /**
     * The library's internal runtime behind {@code emf}: these tests use it to run a replica health
     * check now ({@code checkReplicasNow()}) and to read a replica's lag. The only reference of the
     * ITs to the library's internals; update it here when {@code RoutingRuntime} moves.
     */
    public static RoutingRuntime runtime(EntityManagerFactory emf) {
        return RoutingRuntime.of(emf);
    }

    /**
     * Waits until every running standby has replayed the primary's current position, then until {@code emf}
     * reports every replica up, and runs its health check once more, so that what the library knows (each
     * replica's replay position and lag) is from after the catch-up. The cluster being caught up does not mean
     * the library has seen it: its health check runs every 100 ms on a thread of its own, and until it does, a
     * check from before can still hold a replica over a lag bound or behind a position, and the LSN gate's stall
     * marks (a replica that did not move during a wait that timed out) stand.
     */
    public static void awaitCaughtUpAsSeenBy(PostgresCluster cluster, EntityManagerFactory emf) {
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        RoutingTestSupport.awaitReplicasUp(emf);
        runtime(emf).checkReplicasNow();
    }

    /** The first throwable of {@code type} in the cause chain of {@code e}, or {@code null}. */
    public static <T extends Throwable> T causeOfType(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    /**
     * Ends every other session on the primary that waits for a lock or sits in an open transaction:
     * after a test whose threads hung on a lock (the failure it guards against), so that they end and
     * the next test starts clean.
     */
    public static void endSessionsStuckOnLocks(PostgresCluster cluster) throws SQLException {
        RoutingTestSupport.onPrimary(
                cluster,
                "select pg_catalog.pg_terminate_backend(pid) from pg_catalog.pg_stat_activity"
                        + " where datname = current_database() and pid <> pg_catalog.pg_backend_pid()"
                        + " and (wait_event_type = 'Lock' or state like 'idle in transaction%')");
    }
}
