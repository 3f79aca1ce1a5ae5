package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import jakarta.persistence.NamedNativeQuery;
import jakarta.persistence.NamedQuery;
import jakarta.persistence.NamedStoredProcedureQuery;
import jakarta.persistence.QueryHint;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.hibernate.SessionFactory;
import org.hibernate.SessionFactoryObserver;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.models.spi.ClassDetails;
import org.hibernate.models.spi.ModelsContext;
import org.hibernate.query.named.NamedObjectRepository;
import org.hibernate.query.named.NamedQueryMemento;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warns, once per named query, about the routing strategy given as a plain query hint
 * ({@code @QueryHint(name = "hibernate.routing.strategy", …)}), the form a JPA user writes first.
 *
 * <p>Hibernate drops query hints it does not know when it applies them to a query (it logs
 * "Ignoring unrecognized query hint" at INFO), and offers no hook that sees them at run time: the
 * query would silently run under the strategy of its session or scope. So the bootstrap looks where
 * the hints are still known: the named queries of the domain model, from annotations (and from
 * {@code orm.xml}, which Hibernate's boot model turns into the same annotations; {@link #checkModel}:
 * Hibernate does not keep an HQL named query's unknown hints any further), and the named queries the session factory prepared ({@link #sessionFactoryCreated};
 * native and procedure queries keep all their hints there).
 */
final class NamedQueryHintCheck implements SessionFactoryObserver {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(NamedQueryHintCheck.class);

    /** The named queries already reported. */
    private final Set<String> reported = new HashSet<>();

    /** Checks the named queries declared in the domain model: annotations, and {@code orm.xml} (which Hibernate turns into them). */
    void checkModel(ModelsContext models) {
        try {
            models.getClassDetailsRegistry().forEachClassDetails(details -> checkClass(details, models));
        } catch (RuntimeException e) {
            // Only a warning is at stake: never fail the bootstrap for it.
            LOG.debug("Could not look for routing hints in the named queries of the domain model", e);
        }
    }

    private void checkClass(ClassDetails details, ModelsContext models) {
        final NamedQuery[] queries = details.getRepeatedAnnotationUsages(NamedQuery.class, models);
        if (queries != null) {
            for (NamedQuery query : queries) {
                check(query.name(), query.hints());
            }
        }
        final NamedNativeQuery[] nativeQueries = details.getRepeatedAnnotationUsages(NamedNativeQuery.class, models);
        if (nativeQueries != null) {
            for (NamedNativeQuery query : nativeQueries) {
                check(query.name(), query.hints());
            }
        }
        final NamedStoredProcedureQuery[] procedures =
                details.getRepeatedAnnotationUsages(NamedStoredProcedureQuery.class, models);
        if (procedures != null) {
            for (NamedStoredProcedureQuery query : procedures) {
                check(query.name(), query.hints());
            }
        }
    }

    private void check(String name, QueryHint[] hints) {
        for (QueryHint hint : hints == null ? new QueryHint[0] : hints) {
            if (hint != null && RoutingSettings.STRATEGY.equals(hint.name())) {
                report(name, hint.value());
            }
        }
    }

    /** Checks the named queries the session factory prepared, once it is built. */
    @Override
    public void sessionFactoryCreated(SessionFactory factory) {
        try {
            final NamedObjectRepository named =
                    ((SessionFactoryImplementor) factory).getQueryEngine().getNamedObjectRepository();
            named.visitSqmQueryMementos(this::check);
            named.visitNativeQueryMementos(this::check);
            named.visitCallableQueryMementos(this::check);
        } catch (RuntimeException e) {
            LOG.debug("Could not look for routing hints in the prepared named queries", e);
        }
    }

    private void check(NamedQueryMemento<?> query) {
        final Map<String, Object> hints = query.getHints();
        final Object value = hints == null ? null : hints.get(RoutingSettings.STRATEGY);
        if (value != null) {
            report(query.getRegistrationName(), value);
        }
    }

    private void report(String query, Object value) {
        if (!reported.add(query)) {
            return;
        }
        final String strategy = name(value);
        LOG.warn(
                "Named query '{}' has the query hint {}={}, which Hibernate ignores (it drops query hints it does"
                        + " not know): the query runs under the strategy of its session or scope. Give the strategy"
                        + " as a database hint instead, which the routing reads from the SQL: @QueryHint(name = \"{}\","
                        + " value = \"{}={}\"), or in code query.setHint(RoutingHints.DATABASE_HINT,"
                        + " RoutingHints.strategy(Strategy.{}))",
                query,
                RoutingSettings.STRATEGY,
                strategy,
                RoutingHints.DATABASE_HINT,
                RoutingSettings.STRATEGY,
                strategy,
                strategy);
    }

    /** The strategy's name if {@code value} names one ({@code primary}, {@code stale-read}), else the value as given. */
    private static String name(Object value) {
        try {
            final Strategy strategy = Strategy.interpret(value, RoutingSettings.STRATEGY);
            return strategy == null ? String.valueOf(value) : strategy.name();
        } catch (RoutingConfigurationException e) {
            return String.valueOf(value).trim();
        }
    }
}
