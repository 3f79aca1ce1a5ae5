package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.persistence.EntityManagerFactory;
import java.util.stream.Stream;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Actuator health of routing: one indicator per node ({@code primary}, {@code replica1}, …), read
 * from {@link RoutingStatus} at each call, so it costs no query. A replica is {@code UP} while it
 * answers its health checks and its circuit breaker is closed; otherwise it is {@link #DEGRADED}
 * (by default: the application still serves every request, from the other replicas or the primary,
 * so the overall health stays {@code UP} and HTTP 200) or, when strict, {@code DOWN}. Details give
 * its lag, its breaker state and its pool. The primary's own reachability is Spring Boot's {@code db}
 * indicator; here it is {@code UP} with its statement counts.
 */
public final class RoutingHealthContributor implements CompositeHealthContributor {
    /**
     * A replica that cannot serve reads, while routing serves them elsewhere. Not in Actuator's
     * default status order, so it does not lower the aggregate, and not mapped to an error code, so
     * it answers HTTP 200.
     */
    public static final Status DEGRADED =
            new Status("DEGRADED", "cannot serve reads; they go to the other replicas or the primary");

    private static final String CIRCUIT_STATE = "hibernate.routing.replica.circuit.state";

    private final EntityManagerFactory entityManagerFactory;
    private final MeterRegistry registry;
    private final boolean strict;

    /**
     * @param registry the registry the library records in, for the circuit breakers' state; may be {@code null}
     */
    public RoutingHealthContributor(EntityManagerFactory entityManagerFactory, MeterRegistry registry) {
        this(entityManagerFactory, registry, false);
    }

    /**
     * @param registry the registry the library records in, for the circuit breakers' state; may be {@code null}
     * @param strict whether a replica that cannot serve reads is {@code DOWN} rather than {@link #DEGRADED}
     */
    public RoutingHealthContributor(EntityManagerFactory entityManagerFactory, MeterRegistry registry, boolean strict) {
        this.entityManagerFactory = entityManagerFactory;
        this.registry = registry;
        this.strict = strict;
    }

    @Override
    public HealthContributor getContributor(String name) {
        return nodes().filter(node -> node.name().equals(name))
                .findFirst()
                .map(node -> (HealthContributor) indicator(node.name()))
                .orElse(null);
    }

    @Override
    public Stream<Entry> stream() {
        return nodes().map(node -> new Entry(node.name(), indicator(node.name())));
    }

    private Stream<RoutingStatus.Node> nodes() {
        final RoutingStatus status = RoutingStatus.of(entityManagerFactory);
        return status == null ? Stream.empty() : status.nodes().stream();
    }

    /** Reads the node's state when asked, not when the contributor was listed. */
    private HealthIndicator indicator(String name) {
        return () -> nodes().filter(node -> node.name().equals(name))
                .findFirst()
                .map(this::health)
                .orElseGet(() -> Health.unknown().build());
    }

    private Health health(RoutingStatus.Node node) {
        final Health.Builder health = node.up() ? Health.up() : strict ? Health.down() : Health.status(DEGRADED);
        health.withDetail("role", node.primary() ? "primary" : "replica");
        if (!node.primary()) {
            health.withDetail("lagBytes", node.lagBytes() < 0 ? "unknown" : node.lagBytes());
            health.withDetail("lagSeconds", Double.isNaN(node.lagSeconds()) ? "unknown" : node.lagSeconds());
            health.withDetail("circuitBreaker", circuitBreaker(node.name()));
            if (node.servers().size() > 1) {
                // Several servers behind the replica's URL: each one's lag, as reads are decided by it.
                health.withDetail(
                        "servers",
                        node.servers().stream()
                                .map(server -> server.address() + ":" + server.port() + " "
                                        + (server.problem() != null
                                                ? "refused"
                                                : server.lagBytes() < 0
                                                        ? "lag unknown"
                                                        : server.lagBytes() + " B behind"))
                                .toList());
            }
        }
        health.withDetail("reads", node.reads());
        if (node.primary()) {
            health.withDetail("writes", node.writes());
        }
        if (node.pool() != null) {
            health.withDetail("pool", node.pool());
        }
        return health.build();
    }

    private String circuitBreaker(String node) {
        final Gauge gauge = registry == null
                ? null
                : registry.find(CIRCUIT_STATE).tag("node", node).gauge();
        if (gauge == null) {
            return "unknown";
        }
        return switch ((int) gauge.value()) {
            case 0 -> "closed";
            case 1 -> "open";
            case 2 -> "half-open";
            default -> "unknown";
        };
    }
}
