package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.RoutingStatus;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManagerFactory;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Readiness of routing, read from {@link RoutingStatus} at each call (no query): one entry per node. A replica
 * that cannot serve (its health checks fail or its circuit breaker is open) is {@code DEGRADED} and readiness stays
 * {@code UP}, since the library serves its reads from the other replicas or the primary; with
 * {@code quarkus.hibernate-routing.health.strict=true} it makes readiness {@code DOWN}. The primary's own
 * reachability is Quarkus' datasource check. Liveness has no check of the extension: no server makes an instance
 * dead.
 */
@Readiness
@ApplicationScoped
public class RoutingReadinessCheck implements HealthCheck {
    static final String NAME = "hibernate-routing";

    @Inject
    HibernateRoutingConfig config;

    @Inject
    EntityManagerFactory entityManagerFactory;

    @Override
    public HealthCheckResponse call() {
        final HealthCheckResponseBuilder response = HealthCheckResponse.named(NAME);
        if (RoutedUnit.provider() == null) {
            return response.up().withData("routing", "off").build();
        }
        final RoutingStatus status = RoutingStatus.of(entityManagerFactory);
        boolean up = true;
        for (RoutingStatus.Node node : status == null ? java.util.List.<RoutingStatus.Node>of() : status.nodes()) {
            final String state = node.up() ? "UP" : node.primary() ? "DOWN" : "DEGRADED";
            if (!node.up() && config.health().strict()) {
                up = false;
            }
            final StringBuilder detail = new StringBuilder(state);
            if (!node.primary()) {
                detail.append(", lag ")
                        .append(node.lagBytes() < 0 ? "unknown" : node.lagBytes() + " B")
                        .append(
                                Double.isNaN(node.lagSeconds())
                                        ? ""
                                        : String.format(java.util.Locale.ROOT, " / %.3f s", node.lagSeconds()));
            }
            detail.append(", ").append(node.reads()).append(" reads");
            if (node.primary()) {
                detail.append(", ").append(node.writes()).append(" writes");
            }
            response.withData(node.name(), detail.toString());
        }
        return response.status(up).build();
    }
}
