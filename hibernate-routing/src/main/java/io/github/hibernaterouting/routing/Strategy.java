package io.github.hibernaterouting.routing;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How a unit of work chooses between the primary and the replicas.
 *
 * <p>A strategy can be set at every level; the most specific one wins: query hint, then
 * EntityManager/Session property, then a programmatic {@link RoutingScope}, then the HTTP request,
 * then the worker, then the persistence-unit default ({@value RoutingSettings#STRATEGY}). A
 * freshness floor of an enclosing scope ({@link RoutingScope.Builder#floor(Strategy)}) then raises
 * the result if it is less fresh: {@code PRIMARY}, then {@code READ_AFTER_WRITE}, then
 * {@code STALE_READ}.
 */
public enum Strategy {
    /**
     * Reads go to a replica unless this unit of work (or its scope) has written, or the caller has a
     * write that no eligible replica has replayed yet. The default.
     */
    READ_AFTER_WRITE,
    /** Reads go to a replica even after writes; writes still go to the primary. */
    STALE_READ,
    /** Everything goes to the primary. */
    PRIMARY,
    /** Reads are pinned to a replica; a write fails with {@link ReplicaWriteException} instead of moving to the primary. */
    REPLICA;

    /**
     * Interprets a setting or hint value: a {@code Strategy} or its name, in any case.
     *
     * @param value the value to interpret
     * @param source what the value came from (a setting key, a hint name), used in the error message
     * @return the strategy, or {@code null} when {@code value} is {@code null} or blank
     * @throws RoutingConfigurationException when the value names no strategy
     */
    public static Strategy interpret(Object value, String source) {
        if (value == null) {
            return null;
        }
        if (value instanceof Strategy strategy) {
            return strategy;
        }
        final String text = value.toString().trim();
        if (text.isEmpty()) {
            return null;
        }
        try {
            return valueOf(text.toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new RoutingConfigurationException(source, text, "one of " + allowedValues());
        }
    }

    static String allowedValues() {
        return Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "));
    }
}
