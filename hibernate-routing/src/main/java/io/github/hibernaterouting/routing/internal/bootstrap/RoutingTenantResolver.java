package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;
import io.github.hibernaterouting.routing.internal.session.StrategyResolver;
import org.hibernate.context.spi.CurrentTenantIdentifierResolver;

/**
 * Decides which connection identifier a new session starts on: {@value Routing#PRIMARY} when the
 * effective strategy is {@code PRIMARY}, or under {@code READ_AFTER_WRITE} when the current scope
 * or an enclosing one has written; otherwise {@value Routing#REPLICA}, whose connections route statement by statement.
 */
public final class RoutingTenantResolver implements CurrentTenantIdentifierResolver<String> {
    private final Strategy defaultStrategy;

    /** For Hibernate, when the class is named in the settings; the default strategy is READ_AFTER_WRITE. */
    public RoutingTenantResolver() {
        this(Strategy.valueOf(RoutingSettings.DEFAULT_STRATEGY));
    }

    RoutingTenantResolver(Strategy defaultStrategy) {
        this.defaultStrategy = defaultStrategy;
    }

    @Override
    public String resolveCurrentTenantIdentifier() {
        final ScopeFrame scope = ScopeFrame.current();
        final Strategy strategy = StrategyResolver.resolve(null, null, scope, false, defaultStrategy);
        if (strategy == Strategy.PRIMARY
                || strategy == Strategy.READ_AFTER_WRITE && scope != null && scope.writeKnown()) {
            return Routing.PRIMARY;
        }
        return Routing.REPLICA;
    }

    @Override
    public boolean validateExistingCurrentSessions() {
        // A contextual session stays usable when the scope changes; each statement is routed anyway.
        return false;
    }
}
