package io.github.hibernaterouting.routing.it;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * pgjdbc, except that the library's health check of a replica ({@code pg_last_xact_replay_timestamp()})
 * or of the primary ({@code pg_walfile_name()}) can be made to hang on chosen servers, as a check does
 * against a server that stopped answering without closing its connections. Named by
 * {@code hibernate.hikari.driverClassName} (or a pool's connection provider class), so every connection
 * the library opens goes through it; everything else passes through untouched.
 */
public final class BlockableDriver implements Driver {
    /** The replica health check's query contains it. */
    public static final String REPLICA_CHECK = "pg_last_xact_replay_timestamp";

    /** The primary health check's query contains it. */
    public static final String PRIMARY_CHECK = "pg_walfile_name";

    /** Blocked server URLs, each with the fragment of the query that hangs there. */
    private static final Map<String, String> BLOCKED = new ConcurrentHashMap<>();

    private static final Object LOCK = new Object();
    private static int hanging;
    private final Driver delegate = new org.postgresql.Driver();

    /** From now on the replica health check of the server at {@code jdbcUrl} hangs until {@link #unblockAll()}. */
    public static void block(String jdbcUrl) {
        block(jdbcUrl, REPLICA_CHECK);
    }

    /** From now on queries containing {@code queryFragment} on the server at {@code jdbcUrl} hang until {@link #unblockAll()}. */
    public static void block(String jdbcUrl, String queryFragment) {
        BLOCKED.put(jdbcUrl, queryFragment);
    }

    /** Waits until a query hangs here; fails after {@code timeout}. */
    public static void awaitHanging(Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (LOCK) {
            while (hanging == 0) {
                final long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    throw new AssertionError("no query hung within " + timeout);
                }
                LOCK.wait(left);
            }
        }
    }

    public static void unblockAll() {
        synchronized (LOCK) {
            BLOCKED.clear();
            LOCK.notifyAll();
        }
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
        final Connection connection = delegate.connect(url, info);
        if (connection == null) {
            return null;
        }
        return proxy(Connection.class, (proxy, method, args) -> {
            final Object result = invoke(connection, method, args);
            if (result instanceof Statement statement && method.getName().equals("createStatement")) {
                return statement(url, statement);
            }
            return result;
        });
    }

    private static Statement statement(String url, Statement statement) {
        return proxy(Statement.class, (proxy, method, args) -> {
            if (method.getName().equals("executeQuery")) {
                final String sql = String.valueOf(args[0]);
                synchronized (LOCK) {
                    boolean counted = false;
                    try {
                        while (BLOCKED.entrySet().stream()
                                .anyMatch(b -> url.startsWith(b.getKey()) && sql.contains(b.getValue()))) {
                            if (!counted) {
                                counted = true;
                                hanging++;
                                LOCK.notifyAll();
                            }
                            try {
                                LOCK.wait();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new SQLException("interrupted while blocked", "57014", e);
                            }
                        }
                    } finally {
                        if (counted) {
                            hanging--;
                        }
                    }
                }
            }
            return invoke(statement, method, args);
        });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, InvocationHandler handler) {
        return (T) Proxy.newProxyInstance(BlockableDriver.class.getClassLoader(), new Class<?>[] {type}, handler);
    }

    @Override
    public boolean acceptsURL(String url) throws SQLException {
        return delegate.acceptsURL(url);
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
        return delegate.getPropertyInfo(url, info);
    }

    @Override
    public int getMajorVersion() {
        return delegate.getMajorVersion();
    }

    @Override
    public int getMinorVersion() {
        return delegate.getMinorVersion();
    }

    @Override
    public boolean jdbcCompliant() {
        return false;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }
}
