package io.github.hibernaterouting.routing.internal;

import org.hibernate.context.spi.CurrentTenantIdentifierResolver;

import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;

/**
 * Decides which connection identifier a new session starts on: {@value Routing#PRIMARY} when the
 * effective strategy is {@code PRIMARY}, or under {@code READ_AFTER_WRITE} when the current scope
 * has written; otherwise {@value Routing#REPLICA}, whose connections route statement by statement.
 */
public final class RoutingTenantResolver implements CurrentTenantIdentifierResolver<String> {
	private final Strategy defaultStrategy;

	/** For Hibernate, when the class is named in the settings; the default strategy is READ_AFTER_WRITE. */
	public RoutingTenantResolver() {
		this( RoutingConfig.DEFAULT_STRATEGY );
	}

	RoutingTenantResolver(Strategy defaultStrategy) {
		this.defaultStrategy = defaultStrategy;
	}

	@Override
	public String resolveCurrentTenantIdentifier() {
		final RoutingScope scope = RoutingScope.current();
		Strategy strategy = scope == null ? null : scope.effectiveStrategy();
		if ( strategy == null ) {
			strategy = defaultStrategy;
		}
		if ( strategy == Strategy.PRIMARY || strategy == Strategy.READ_AFTER_WRITE && scope != null && scope.hasWritten() ) {
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
