package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.ReplicaSettings.LoadBalancing;
import io.github.hibernaterouting.routing.ReplicaSettings.ReplicaFailure;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.ActorStamps;
import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.ReadYourWritesTracker;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.CircuitBreaker;
import io.github.hibernaterouting.routing.internal.replicas.LagBounds;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaNode;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaSet;
import io.github.hibernaterouting.routing.internal.session.WritePolicy;
import io.github.hibernaterouting.routing.sql.SqlClassifier;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * A database server for unit tests of the JDBC layer, without a database: its connections record
 * every statement prepared on them, and every call made on each statement, as text such as
 * {@code setLong(1, 42)}. Statements the library runs itself ({@code createStatement}: health check,
 * WAL positions) answer as a caught-up standby or an idle primary would.
 */
final class FakeServer {
    /**
     * A routed connection over {@code primary} and one replica, {@code replica} (named {@code replica1}),
     * with the library's defaults: {@code READ_AFTER_WRITE}, {@code FALLBACK}, lazy transactions, no wait.
     */
    static RoutingConnection routedConnection(FakeServer primary, FakeServer replica) {
        final RoutingMetrics metrics = new RoutingMetrics(new SimpleMeterRegistry(), "test", List.of("replica1"));
        final ReplicaNode node = new ReplicaNode(
                0, "replica1", "fake", replica.dataSource, new CircuitBreaker(1, 1_000_000_000L, System::nanoTime));
        final ReplicaSet replicas = new ReplicaSet(
                List.of(node),
                new LagBounds(true, 0, 0),
                LoadBalancing.ROUND_ROBIN,
                primary.dataSource,
                Duration.ofSeconds(1),
                Duration.ofMillis(1),
                metrics);
        replicas.checkNow();
        final ReadYourWritesTracker tracker = new ReadYourWritesTracker(
                new ActorStamps(Duration.ofSeconds(60), 100_000, null, null, primary.dataSource, metrics));
        return new JdbcRouting(
                        SqlClassifier.builtIn(),
                        primary.dataSource,
                        replicas,
                        ReplicaFailure.FALLBACK,
                        0,
                        false,
                        Strategy.READ_AFTER_WRITE,
                        metrics,
                        tracker,
                        new WritePolicy(tracker),
                        IsolationLevel.UNKNOWN,
                        true,
                        null)
                .connection(false, false);
    }

    /** One prepared statement: where, with what, and what was called on it. */
    static final class FakeStatement {
        final FakeServer server;
        final FakeConnection connection;
        final String sql;
        /** The arguments of {@code prepareStatement} after the SQL, as text. */
        final String prepareArguments;

        final List<String> calls = new ArrayList<>();
        boolean closed;

        FakeStatement(FakeServer server, FakeConnection connection, Object[] args) {
            this.server = server;
            this.connection = connection;
            this.sql = (String) args[0];
            this.prepareArguments = text(Arrays.copyOfRange(args, 1, args.length));
        }

        /** The calls that executed it. */
        List<String> executions() {
            return calls.stream().filter(call -> call.startsWith("execute")).toList();
        }
    }

    /** One physical connection. */
    static final class FakeConnection {
        boolean autoCommit = true;
        boolean closed;
    }

    final String name;
    private final boolean standby;
    final List<FakeStatement> statements = new ArrayList<>();
    final List<FakeConnection> connections = new ArrayList<>();
    final DataSource dataSource;

    FakeServer(String name, boolean standby) {
        this.name = name;
        this.standby = standby;
        this.dataSource = proxy(DataSource.class, (proxy, method, args) -> switch (method.getName()) {
            case "getConnection" -> connection();
            case "isWrapperFor" -> false;
            default -> defaultValue(method);
        });
    }

    /** The statements prepared with {@code sql}, oldest first. */
    List<FakeStatement> prepared(String sql) {
        return statements.stream().filter(s -> s.sql.equals(sql)).toList();
    }

    private Connection connection() {
        final FakeConnection state = new FakeConnection();
        connections.add(state);
        return proxy(Connection.class, (proxy, method, args) -> switch (method.getName()) {
            case "prepareStatement" -> statement(state, args);
            case "createStatement" -> internalStatement();
            case "setAutoCommit" -> {
                state.autoCommit = (Boolean) args[0];
                yield null;
            }
            case "getAutoCommit" -> state.autoCommit;
            case "close" -> {
                state.closed = true;
                yield null;
            }
            case "isClosed" -> state.closed;
            case "isValid" -> !state.closed;
            case "getTransactionIsolation" -> Connection.TRANSACTION_READ_COMMITTED;
            case "isWrapperFor" -> false;
            case "toString" -> name + " connection";
            default -> defaultValue(method);
        });
    }

    private PreparedStatement statement(FakeConnection connection, Object[] args) {
        final FakeStatement statement = new FakeStatement(this, connection, args);
        statements.add(statement);
        return proxy(PreparedStatement.class, (proxy, method, callArgs) -> {
            if (method.getName().equals("toString")) {
                return name + ": " + statement.sql;
            }
            if (statement.closed
                    && !method.getName().equals("close")
                    && !method.getName().equals("isClosed")) {
                throw new SQLException("This statement has been closed.", "55000");
            }
            statement.calls.add(method.getName() + "(" + text(callArgs) + ")");
            return switch (method.getName()) {
                case "close" -> {
                    statement.closed = true;
                    yield null;
                }
                case "isClosed" -> statement.closed;
                case "executeQuery" -> resultSet(new Object[0][]);
                case "executeBatch", "executeLargeBatch" -> batchResult(method, statement);
                default -> defaultValue(method);
            };
        });
    }

    private static Object batchResult(Method method, FakeStatement statement) {
        final int entries = (int) statement.calls.stream()
                .filter(call -> call.equals("addBatch()"))
                .count();
        return method.getName().equals("executeBatch") ? new int[entries] : new long[entries];
    }

    /** The library's own queries: a standby in recovery, caught up, at READ COMMITTED by default; the primary's WAL position and default isolation level. */
    private Statement internalStatement() {
        return proxy(Statement.class, (proxy, method, args) -> switch (method.getName()) {
            case "executeQuery" -> {
                final String sql = (String) args[0];
                if (sql.contains("pg_is_in_recovery")) {
                    yield resultSet(new Object[][] {
                        {
                            standby,
                            "0/1000",
                            true,
                            null,
                            "read committed",
                            "7000000000000000001",
                            "1",
                            null,
                            "127.0.0.1",
                            5432,
                            "2026-01-01 00:00:00+00",
                            // default_transaction_read_only, as the library's own replica pools set it
                            "on"
                        }
                    });
                }
                yield resultSet(new Object[][] {
                    {
                        "0/1000",
                        "read committed",
                        "7000000000000000001",
                        "000000010000000000000001",
                        "127.0.0.1",
                        5433,
                        "2026-01-01 00:00:00+00"
                    }
                });
            }
            case "execute" -> false;
            default -> defaultValue(method);
        });
    }

    private static ResultSet resultSet(Object[][] rows) {
        final int[] row = {-1};
        return proxy(ResultSet.class, (proxy, method, args) -> {
            switch (method.getName()) {
                case "next":
                    return ++row[0] < rows.length;
                case "getObject":
                    return rows[row[0]][(Integer) args[0] - 1];
                case "getString":
                    final Object value = rows[row[0]][(Integer) args[0] - 1];
                    return value == null ? null : value.toString();
                case "getBoolean":
                    return value(rows, row[0], args) instanceof Boolean b ? b : Boolean.FALSE;
                case "getDouble":
                    return value(rows, row[0], args) instanceof Number n ? n.doubleValue() : 0.0;
                default:
                    return defaultValue(method);
            }
        });
    }

    private static Object value(Object[][] rows, int row, Object[] args) {
        return rows[row][(Integer) args[0] - 1];
    }

    static String text(Object[] args) {
        if (args == null) {
            return "";
        }
        return Arrays.stream(args)
                .map(arg -> arg instanceof int[] ints
                        ? Arrays.toString(ints)
                        : arg instanceof Object[] objects ? Arrays.toString(objects) : String.valueOf(arg))
                .collect(Collectors.joining(", "));
    }

    private static Object defaultValue(Method method) {
        final Class<?> type = method.getReturnType();
        if (type == boolean.class) {
            return false;
        }
        if (type == int.class) {
            return 0;
        }
        if (type == long.class) {
            return 0L;
        }
        if (type == double.class) {
            return 0.0;
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, InvocationHandler handler) {
        return (T) Proxy.newProxyInstance(FakeServer.class.getClassLoader(), new Class<?>[] {type}, handler);
    }
}
