package io.github.hibernaterouting.routing.internal.replicas;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The library's own connection to one server, for the health check and the LSN gate: one
 * connection, outside the application's pool, so that an application holding every pooled connection
 * never keeps the library from learning where a server is. Opened on first use (with the pool's URL
 * and credentials, or, for a data source the application supplies that the library cannot open
 * connections around, borrowed from it and kept), closed after any failure and opened again by the
 * next query; every query has a timeout. Queries on one server take turns ({@link #query}); servers never wait on each other.
 * Thread-safe.
 */
public final class ServerProbe implements AutoCloseable {
    /** Opens a new physical connection to the server. */
    @FunctionalInterface
    public interface Opener {
        Connection open() throws SQLException;
    }

    /** A query on the probe's connection. */
    @FunctionalInterface
    public interface Query<T> {
        T run(Statement statement) throws SQLException;
    }

    private final Opener opener;
    private final int queryTimeoutSeconds;
    private final String role;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Connection connection;
    private volatile boolean closed;
    /** Incremented after every query that completed; lets waiting callers reuse an answer that came in meanwhile. */
    private volatile long completed;

    /**
     * @param queryTimeoutSeconds the timeout of every query
     * @param role the role it connects as, for messages; {@code null} if not known
     */
    public ServerProbe(Opener opener, int queryTimeoutSeconds, String role) {
        this.opener = opener;
        this.queryTimeoutSeconds = queryTimeoutSeconds;
        this.role = role;
    }

    /** The role it connects as, for messages; {@code null} if not known. */
    public String role() {
        return role;
    }

    /**
     * Runs {@code query} on the probe's connection, opening it first if needed.
     *
     * @throws SQLException if the server cannot be reached or the query fails or times out; the
     *     connection is then closed, and the next query opens a new one
     */
    public <T> T query(Query<T> query) throws SQLException {
        return queryUnlessAnsweredSince(-1, query);
    }

    /**
     * {@link #query}, unless another query completed after {@link #completed()} returned
     * {@code before}: then {@code null}, for callers that only need an answer at least that fresh.
     */
    public <T> T queryUnlessAnsweredSince(long before, Query<T> query) throws SQLException {
        lock.lock();
        try {
            if (before >= 0 && completed != before) {
                return null;
            }
            if (closed) {
                throw new SQLException("The routing health check is closed", "08003");
            }
            if (connection == null) {
                final Connection opened = opener.open();
                try {
                    // A borrowed connection may come with auto-commit off: the checks must not hold
                    // a transaction open on the server between two checks.
                    if (!opened.getAutoCommit()) {
                        opened.setAutoCommit(true);
                    }
                } catch (SQLException | RuntimeException e) {
                    opened.close();
                    throw e;
                }
                connection = opened;
            }
            try (Statement statement = connection.createStatement()) {
                statement.setQueryTimeout(queryTimeoutSeconds);
                final T result = query.run(statement);
                completed++;
                return result;
            } catch (SQLException | RuntimeException e) {
                closeConnection();
                throw e;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the connection, so that the next query opens a new one: behind a URL that reaches several
     * servers, the new one may reach another server.
     */
    public void reconnect() {
        lock.lock();
        try {
            closeConnection();
        } finally {
            lock.unlock();
        }
    }

    /** How many queries have completed; see {@link #query}. */
    public long completed() {
        return completed;
    }

    private void closeConnection() {
        final Connection c = connection;
        connection = null;
        if (c != null) {
            try {
                c.close();
            } catch (SQLException | RuntimeException ignored) {
                // already broken
            }
        }
    }

    /** Closes the connection; a query still running on it (a server that stopped answering) fails. */
    @Override
    public void close() {
        closed = true;
        boolean locked = false;
        try {
            locked = lock.tryLock(1, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            closeConnection();
        } finally {
            if (locked) {
                lock.unlock();
            }
        }
    }
}
