package io.github.hibernaterouting.routing;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * Runs code under a routing strategy: the programmatic level, below query hints and session
 * properties, above the request, the worker and the persistence-unit default.
 *
 * <pre>{@code
 * Account account = Routing.with(Strategy.PRIMARY, () -> repository.findById(id));
 * }</pre>
 *
 * <p>Each call opens a {@link RoutingScope} on the current thread for the duration of the work.
 * Sessions opened inside it, and sessions opened earlier but used inside it, follow its strategy.
 */
public final class Routing {
    /**
     * The connection identifier of the primary, as Hibernate's tenant identifier: a session opened
     * with {@code sessionFactory.withOptions().tenantIdentifier(Routing.PRIMARY)} runs on the primary.
     */
    public static final String PRIMARY = "primary";
    /** The connection identifier of the replicas: sessions opened with it are routed statement by statement. */
    public static final String REPLICA = "replica";

    private Routing() {}

    /** Runs {@code work} under {@code strategy} and returns its result. */
    public static <T> T with(Strategy strategy, Supplier<T> work) {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(work, "work");
        try (RoutingScope ignored = RoutingScope.open(strategy)) {
            return work.get();
        }
    }

    /** Runs {@code work} under {@code strategy}. */
    public static void run(Strategy strategy, Runnable work) {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(work, "work");
        try (RoutingScope ignored = RoutingScope.open(strategy)) {
            work.run();
        }
    }
}
