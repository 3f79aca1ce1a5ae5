package io.github.hibernaterouting.routing;

import java.util.Objects;

/**
 * Query-level routing, the most specific level there is.
 *
 * <p>Hibernate drops query hints it does not know, so a routing hint travels as a database hint
 * ({@value #DATABASE_HINT}) that Hibernate's PostgreSQL dialect writes into the SQL as a leading
 * {@code /*+ ... *}{@code /} comment, where the router reads it:
 * <pre>{@code
 * query.setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.PRIMARY));
 * // or in an annotation:
 * @NamedQuery(name = "...", query = "...",
 *     hints = @QueryHint(name = "hibernate.query.database", value = "hibernate.routing.strategy=PRIMARY"))
 * }</pre>
 * Native SQL may carry the same comment directly: {@code /*+ hibernate.routing.strategy=PRIMARY *}{@code / select ...}.
 *
 * <p>The plain form, {@code query.setHint("hibernate.routing.strategy", "PRIMARY")}, cannot work:
 * Hibernate drops the hint (logging "Ignoring unrecognized query hint" at INFO) before anything the
 * library sees, and the query runs under the strategy of its EntityManager or scope. The bootstrap
 * warns about named queries that carry it.
 */
public final class RoutingHints {
    /** Hibernate's hint for database-level query hints ({@code HibernateHints.HINT_QUERY_DATABASE}). */
    public static final String DATABASE_HINT = "hibernate.query.database";

    private RoutingHints() {}

    /**
     * The value of {@link #DATABASE_HINT} that runs one query under {@code strategy}.
     *
     * @return {@code "hibernate.routing.strategy=" + strategy.name()}
     */
    public static String strategy(Strategy strategy) {
        Objects.requireNonNull(strategy, "strategy");
        return RoutingSettings.STRATEGY + "=" + strategy.name();
    }
}
