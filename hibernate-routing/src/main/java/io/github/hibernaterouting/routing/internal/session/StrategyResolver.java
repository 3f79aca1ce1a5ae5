package io.github.hibernaterouting.routing.internal.session;

import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;

/**
 * The one place that decides which strategy applies, for a statement and for a new session alike:
 * query hint, then EntityManager/Session property, then the innermost scope that names one, then the
 * connection identifier the session was opened with, then the persistence-unit default; the most
 * specific wins. Then the freshest floor of the enclosing scopes (a client's request for fresher
 * reads, see {@code RoutingScope.Builder.floor}) raises what won if it asks for less: a
 * {@code PRIMARY} floor makes every level {@code PRIMARY}, {@code REPLICA} included; a
 * {@code READ_AFTER_WRITE} floor makes {@code STALE_READ} {@code READ_AFTER_WRITE}, and leaves
 * {@code REPLICA} on a replica, which must then reflect the required position.
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
        final Strategy level = mostSpecific(hint, sessionStrategy, scope, primaryTenant, unitDefault);
        return scope == null ? level : floored(level, scope.effectiveFloor());
    }

    private static Strategy mostSpecific(
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

    /** {@code level}, raised to {@code floor} if that is fresher. */
    static Strategy floored(Strategy level, Strategy floor) {
        if (floor == Strategy.PRIMARY) {
            return Strategy.PRIMARY;
        }
        if (floor == Strategy.READ_AFTER_WRITE && level == Strategy.STALE_READ) {
            return Strategy.READ_AFTER_WRITE;
        }
        return level;
    }
}
