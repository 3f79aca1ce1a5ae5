package io.github.hibernaterouting.routing.sql;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

/**
 * The volatility of functions in the target database, which lets the classifier keep calls of
 * user-defined STABLE or IMMUTABLE functions on a replica.
 *
 * <p>Names are passed case-folded as PostgreSQL does (unquoted identifiers lower-cased, quoted
 * ones verbatim). Implementations must be thread-safe.
 */
public interface FunctionCatalog {

    /** PostgreSQL's {@code provolatile}, plus {@link #UNKNOWN} for functions the catalog has never seen. */
    enum Volatility {
        IMMUTABLE,
        STABLE,
        VOLATILE,
        UNKNOWN
    }

    /**
     * The worst volatility over all overloads of {@code name}: in schema {@code schemaOrNull}, or
     * over every schema when it is null (an unqualified call may reach any overload on the search path).
     */
    Volatility volatility(String schemaOrNull, String name);

    /** A catalog that knows nothing: only the classifier's built-in knowledge applies. */
    FunctionCatalog NONE = (schema, name) -> Volatility.UNKNOWN;

    /**
     * Reads every function, aggregate and window function from {@code pg_proc} with one query.
     * Only reads the catalog; the connection's state is left as it was and it is not closed.
     */
    static FunctionCatalog load(Connection connection) throws SQLException {
        Map<String, Volatility> byName = new HashMap<>();
        String sql = "select n.nspname, p.proname,"
                + " max(case p.provolatile when 'v' then 3 when 's' then 2 else 1 end)"
                + " from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace"
                + " where p.prokind in ('f', 'a', 'w') group by 1, 2";
        try (Statement st = connection.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                String schema = rs.getString(1);
                String name = rs.getString(2);
                Volatility v = switch (rs.getInt(3)) {
                    case 3 -> Volatility.VOLATILE;
                    case 2 -> Volatility.STABLE;
                    default -> Volatility.IMMUTABLE;
                };
                byName.put(schema + '.' + name, v);
                byName.merge(name, v, (a, b) -> a.compareTo(b) >= 0 ? a : b);
            }
        }
        Map<String, Volatility> frozen = Map.copyOf(byName);
        return (schema, name) -> frozen.getOrDefault(schema == null ? name : schema + '.' + name, Volatility.UNKNOWN);
    }
}
