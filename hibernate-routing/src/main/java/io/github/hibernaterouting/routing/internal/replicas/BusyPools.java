package io.github.hibernaterouting.routing.internal.replicas;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import javax.sql.DataSource;

/**
 * Tells a replica pool that is only busy (every connection in use, the server answering) from one
 * that failed to connect, for any pool. A busy pool sends the read elsewhere and keeps its breaker
 * closed; a failed one opens it.
 *
 * <p>For a HikariCP pool (also one behind a wrapper that unwraps to it) the exception tells: HikariCP
 * attaches the last failure to connect to its timeout when there was one. Any other pool (a
 * container's, JNDI, Agroal, DBCP, a wrapper that hides its pool) cannot be asked, so the server
 * tells: the pool is busy while the server answered the library's own connection recently, unless
 * the exception carries the server's own refusal.
 */
public final class BusyPools {
    private BusyPools() {}

    /**
     * @param serverAnswering whether the server answered the library's own connection recently enough
     *     (as recent as lag data must be to count)
     */
    static boolean busy(DataSource connections, SQLException e, boolean serverAnswering) {
        if (hikari(connections) != null) {
            return e instanceof SQLTransientConnectionException && e.getCause() == null;
        }
        return serverAnswering && !fromTheServer(e);
    }

    /**
     * The HikariCP pool behind {@code connections}, whoever built it (the library, or a framework such
     * as Spring Boot), unwrapped if need be, or {@code null} when it is not HikariCP.
     */
    public static HikariDataSource hikari(DataSource connections) {
        if (connections instanceof HikariDataSource pool) {
            return pool;
        }
        try {
            return connections.isWrapperFor(HikariDataSource.class) ? connections.unwrap(HikariDataSource.class) : null;
        } catch (SQLException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Whether {@code e} or a cause carries the SQLSTATE of a server that could not be reached or
     * refused the connection (class 08, 28 authentication, 53 resources such as too many connections,
     * 57P shutting down or starting up): a failure to connect, not a pool that was only busy.
     */
    private static boolean fromTheServer(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                final String state = sql.getSQLState();
                if (state.startsWith("08")
                        || state.startsWith("28")
                        || state.startsWith("53")
                        || state.startsWith("57P")) {
                    return true;
                }
            }
        }
        return false;
    }
}
