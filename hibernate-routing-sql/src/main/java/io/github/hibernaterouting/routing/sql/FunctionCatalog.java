package io.github.hibernaterouting.routing.sql;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

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

    /**
     * Whether some overload of {@code name} (in schema {@code schemaOrNull}, or in any schema when it
     * is null) can be called with exactly one argument, counting parameters with defaults and a
     * {@code VARIADIC} one. PostgreSQL also runs such a function in attribute notation:
     * {@code SELECT t.name FROM tbl t} calls {@code name(t)} when {@code tbl} has no column
     * {@code name}, so the classifier judges {@code t.name} as that call when this is true.
     *
     * <p>The default answers true for every function {@link #volatility} knows: the safe guess for a
     * catalog that does not know argument counts (at worst a column named like a volatile function
     * keeps its query on the primary). {@link #load} reads the real answer from {@code pg_proc}.
     */
    default boolean callableWithOneArgument(String schemaOrNull, String name) {
        return volatility(schemaOrNull, name) != Volatility.UNKNOWN;
    }

    /** A catalog that knows nothing: only the classifier's built-in knowledge applies. */
    FunctionCatalog NONE = (schema, name) -> Volatility.UNKNOWN;

    /**
     * Reads every function, aggregate and window function from {@code pg_proc} with one query:
     * their volatility and whether each can be called with one argument.
     * Only reads the catalog; the connection's state is left as it was and it is not closed.
     */
    static FunctionCatalog load(Connection connection) throws SQLException {
        Map<String, Volatility> byName = new HashMap<>();
        Set<String> oneArgument = new HashSet<>();
        String sql = "select n.nspname, p.proname,"
                + " max(case p.provolatile when 'v' then 3 when 's' then 2 else 1 end),"
                + " bool_or(p.pronargs >= 1 and p.pronargs - p.pronargdefaults <= 1)"
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
                if (rs.getBoolean(4)) {
                    oneArgument.add(schema + '.' + name);
                    oneArgument.add(name);
                }
            }
        }
        return new PgProcCatalog(byName, oneArgument);
    }
}
