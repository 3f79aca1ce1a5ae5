package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;

/**
 * The one place that decides which strategy applies, for a statement and for a new session alike:
 * query hint, then EntityManager/Session property, then the innermost scope that names one, then the
 * connection identifier the session was opened with, then the persistence-unit default.
 */
public final class StrategyResolver {
    private StrategyResolver() {}

    /**
     * @param hint the statement's query hint, or {@code null}
     * @param sessionStrategy the session's property, or {@code null}
     * @param scope the thread's innermost scope, or {@code null}
     * @param primaryTenant whether the session was opened with the {@code "primary"} identifier
     * @param unitDefault the persistence-unit default
     */
    public static Strategy resolve(
            Strategy hint, Strategy sessionStrategy, ScopeFrame scope, boolean primaryTenant, Strategy unitDefault) {
        if (hint != null) {
            return hint;
        }
        if (sessionStrategy != null) {
            return sessionStrategy;
        }
        if (scope != null) {
            final Strategy scoped = scope.effectiveStrategy();
            if (scoped != null) {
                return scoped;
            }
        }
        return primaryTenant ? Strategy.PRIMARY : unitDefault;
    }
}
