package io.github.hibernaterouting.routing.it;

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

    /** The first throwable of {@code type} in the cause chain of {@code e}, or {@code null}. */
    public static <T extends Throwable> T causeOfType(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }
}
