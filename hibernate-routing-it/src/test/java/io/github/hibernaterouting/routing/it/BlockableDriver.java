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
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * pgjdbc, except that the library's replica health check ({@code pg_last_xact_replay_timestamp()})
 * can be made to hang on chosen servers, as a check does against a server that stopped answering
 * without closing its connections. Named by {@code hibernate.hikari.driverClassName}, so every
 * connection the library opens goes through it; everything else passes through untouched.
 */
public final class BlockableDriver implements Driver {
    private static final Set<String> BLOCKED = ConcurrentHashMap.newKeySet();
    private static final Object LOCK = new Object();
    private final Driver delegate = new org.postgresql.Driver();

    /** From now on the health check of the server at {@code jdbcUrl} hangs until {@link #unblockAll()}. */
    public static void block(String jdbcUrl) {
        BLOCKED.add(jdbcUrl);
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
            if (method.getName().equals("executeQuery")
                    && String.valueOf(args[0]).contains("pg_last_xact_replay_timestamp")) {
                synchronized (LOCK) {
                    while (BLOCKED.stream().anyMatch(url::startsWith)) {
                        try {
                            LOCK.wait();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new SQLException("interrupted while blocked", "57014", e);
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
