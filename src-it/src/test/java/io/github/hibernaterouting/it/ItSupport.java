package io.github.hibernaterouting.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.hibernate.cfg.AvailableSettings;

/**
 * What the end-to-end tests observe beyond {@link RoutingTestSupport} (settings, persistence units,
 * which server ran a statement, the data on the primary, replicas up): a replica reported down, what
 * failed with which SQLSTATE, what the server logs say ran. Only the library's public API is used,
 * as an application would.
 */
final class ItSupport {
    /** Node names in {@link RoutingStatus}: replica1 is the cluster's standby1, and so on. */
    static final String PRIMARY_NAME = "primary";

    private ItSupport() {}

    /**
     * A persistence unit "src-it" on the cluster with the shared test settings
     * ({@link RoutingTestSupport#settings}), without a second-level cache; {@code overrides} win, null
     * values remove. The module's class path has a cache provider (for the checker matrix's cache
     * cells), which Hibernate would otherwise pick up on its own.
     */
    static EntityManagerFactory emf(PostgresCluster cluster, Map<String, ?> overrides) {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(AvailableSettings.USE_SECOND_LEVEL_CACHE, "false");
        settings.putAll(overrides);
        return RoutingTestSupport.emf("src-it", cluster, settings);
    }

    /** Waits until the persistence unit reports the named replica down. */
    static void awaitReplicaDown(EntityManagerFactory emf, String name) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            final RoutingStatus status = RoutingStatus.of(emf);
            if (status.nodes().stream().anyMatch(n -> n.name().equals(name) && !n.up())) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " not reported down after 30s: " + routingState(emf));
            }
            pause(20);
        }
    }

    /**
     * A polling interval inside a loop with a deadline, or the length of an injected fault; never a wait for
     * something the library or the servers do (replication, a health check, a reconnection).
     */
    /** The nodes that served {@code reads} reads, each by a new EntityManager of {@code emf}. */
    static Set<Node> nodesServing(PostgresCluster cluster, EntityManagerFactory emf, int reads) {
        final Set<Node> nodes = new HashSet<>();
        for (int i = 0; i < reads; i++) {
            try (EntityManager em = emf.createEntityManager()) {
                nodes.add(RoutingTestSupport.servedBy(cluster, em));
            }
        }
        return nodes;
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** The SQLSTATE of the first {@link SQLException} in the cause chain that has one, or {@code "none:<type>"}. */
    static String sqlState(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                for (SQLException s = sql; s != null; s = s.getNextException()) {
                    if (s.getSQLState() != null) {
                        return s.getSQLState();
                    }
                }
            }
        }
        return "none:" + failure.getClass().getSimpleName();
    }

    /** Connection exceptions (class 08) and "terminating connection due to administrator command" (57P01). */
    static boolean isConnectionFailure(String sqlState) {
        return sqlState.startsWith("08") || sqlState.equals("57P01");
    }

    /** Every message in the cause chain, joined: what a user would read in a stack trace. */
    static String messages(Throwable failure) {
        final StringBuilder text = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            text.append(t.getClass().getName())
                    .append(": ")
                    .append(t.getMessage())
                    .append(" | ");
        }
        return text.toString();
    }

    static boolean causeChainHas(Throwable failure, Class<? extends Throwable> type) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * How many times statements containing {@code tag} were executed on {@code node}, by its server
     * log ({@code log_statement=all}): the {@code statement:} lines of the simple protocol and the
     * {@code execute …:} lines of the extended one, not the {@code STATEMENT:} context of errors.
     */
    static long executionsInLog(Node node, String tag) throws IOException {
        final Pattern executed = Pattern.compile("LOG:\\s+(statement|execute [^:]*): .*" + Pattern.quote(tag));
        final List<String> lines = Files.readAllLines(node.logFile(), StandardCharsets.ISO_8859_1);
        return lines.stream().filter(line -> executed.matcher(line).find()).count();
    }
}
