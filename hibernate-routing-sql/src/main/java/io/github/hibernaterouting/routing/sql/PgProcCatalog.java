package io.github.hibernaterouting.routing.sql;

import java.util.Map;
import java.util.Set;

/**
 * The {@link FunctionCatalog} that {@link FunctionCatalog#load} reads from {@code pg_proc}: keyed
 * by {@code schema.name} and by bare name (the worst volatility over all schemas). Immutable.
 */
final class PgProcCatalog implements FunctionCatalog {

    private final Map<String, Volatility> volatility;
    private final Set<String> oneArgument;

    PgProcCatalog(Map<String, Volatility> volatility, Set<String> oneArgument) {
        this.volatility = Map.copyOf(volatility);
        this.oneArgument = Set.copyOf(oneArgument);
    }

    @Override
    public Volatility volatility(String schemaOrNull, String name) {
        return volatility.getOrDefault(key(schemaOrNull, name), Volatility.UNKNOWN);
    }

    @Override
    public boolean callableWithOneArgument(String schemaOrNull, String name) {
        return oneArgument.contains(key(schemaOrNull, name));
    }

    private static String key(String schemaOrNull, String name) {
        return schemaOrNull == null ? name : schemaOrNull + '.' + name;
    }
}
