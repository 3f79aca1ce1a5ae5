package io.github.hibernaterouting.routing.internal.jdbc;

import static io.github.hibernaterouting.routing.internal.jdbc.RoutedStatement.NONE;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The statement wrapper's delegation is generated code: every method of {@link PreparedStatement}
 * but {@code getConnection} must reach the wrapped statement as the same method with the same
 * arguments, in order; {@code getConnection} must answer the routed connection.
 */
class RoutedStatementTest {
    private record Call(Method method, List<Object> args) {}

    @Test
    void everyMethod_isPassedThroughWithItsArguments() throws Exception {
        final List<Call> calls = new ArrayList<>();
        final PreparedStatement recorder = (PreparedStatement) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> {
                    calls.add(new Call(method, args == null ? List.of() : Arrays.asList(args)));
                    return defaultValue(method.getReturnType());
                });
        final Connection physical = (Connection) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> null);
        final RoutedStatement watch = new RoutedStatement(
                recorder, null, new PhysicalConnections(null, null, null, 0, null, null), physical, null, null);

        int checked = 0;
        for (Method method : PreparedStatement.class.getMethods()) {
            if (Modifier.isStatic(method.getModifiers())
                    || method.getName().equals("unwrap")
                    || method.getName().equals("isWrapperFor")
                    || method.getName().equals("getConnection")) {
                continue;
            }
            final Object[] args = distinctArguments(method.getParameterTypes());
            calls.clear();
            method.invoke(watch, args);
            assertThat(calls).as(method.toString()).hasSize(1);
            assertThat(calls.get(0).method().getName()).as(method.toString()).isEqualTo(method.getName());
            assertThat(calls.get(0).method().getParameterTypes())
                    .as(method.toString())
                    .isEqualTo(method.getParameterTypes());
            assertThat(calls.get(0).args()).as(method.toString()).containsExactly(args);
            checked++;
        }
        assertThat(checked).isGreaterThan(100);
    }

    @Test
    void unwrap_answersForTheWrapperItself_andAsksTheStatementOtherwise() throws Exception {
        final PreparedStatement recorder = (PreparedStatement) Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {PreparedStatement.class},
                (proxy, method, args) ->
                        method.getName().equals("isWrapperFor") ? Boolean.FALSE : "the statement's answer");
        final RoutedStatement watch = new RoutedStatement(
                recorder, null, new PhysicalConnections(null, null, null, 0, null, null), null, null, null);
        assertThat(watch.unwrap(RoutedStatement.class)).isSameAs(watch);
        assertThat(watch.isWrapperFor(PreparedStatement.class)).isTrue();
        assertThat(watch.unwrap(String.class)).isEqualTo("the statement's answer");
        assertThat(watch.isWrapperFor(String.class)).isFalse();
    }

    @Test
    void getConnection_answersTheRoutedConnection_neverThePhysicalOne() throws Exception {
        final Connection physical = (Connection) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> null);
        final PreparedStatement statement = (PreparedStatement) Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {PreparedStatement.class},
                (proxy, method, args) -> method.getName().equals("getConnection") ? physical : null);
        final Connection routed = (Connection) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> null);
        final RoutedStatement watch = new RoutedStatement(
                statement, routed, new PhysicalConnections(null, null, null, 0, null, null), physical, null, null);
        assertThat(watch.getConnection()).isSameAs(routed);
    }

    @Test
    void aStatementOnAReplica_countsAsReadingReplicaData_untilItIsClosed() throws Exception {
        final Connection replica = (Connection) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> null);
        final Connection primary = (Connection) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> null);
        final PhysicalConnections physicals = new PhysicalConnections(null, null, null, 0, null, null);
        physicals.replica = replica;
        physicals.primary = primary;
        final UnitOfWorkRouter router = new UnitOfWorkRouter(null, physicals, null, false);
        final PreparedStatement statement = (PreparedStatement) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> null);

        assertThat(router.prepared(null, primary, statement, "select 1", NONE, NONE, NONE, NONE, null))
                .as("a statement on the primary needs no watching")
                .isSameAs(statement);
        assertThat(router.mayBeReadingReplicaData()).isFalse();

        final PreparedStatement outer =
                router.prepared(null, replica, statement, "select 1", NONE, NONE, NONE, NONE, null);
        final PreparedStatement nested =
                router.prepared(null, replica, statement, "select 1", NONE, NONE, NONE, NONE, null);
        assertThat(router.mayBeReadingReplicaData()).isTrue();
        nested.close();
        nested.close();
        assertThat(router.mayBeReadingReplicaData())
                .as("the outer statement is still open, whatever ran since")
                .isTrue();
        outer.close();
        assertThat(router.mayBeReadingReplicaData()).isFalse();

        router.prepared(null, replica, statement, "select 1", NONE, NONE, NONE, NONE, null);
        router.released();
        assertThat(router.mayBeReadingReplicaData())
                .as("a statement left open is gone with its connection")
                .isFalse();
    }

    /** Arguments that differ from one position to the next, so a swapped pair would show. */
    private static Object[] distinctArguments(Class<?>[] types) {
        final Object[] args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            final Class<?> type = types[i];
            if (type == int.class) {
                // Negative, so that setFetchSize does not ask the (unbound) connection for a cursor.
                args[i] = -(i + 7);
            } else if (type == long.class) {
                args[i] = (long) (i + 11);
            } else if (type == boolean.class) {
                args[i] = i % 2 == 0;
            } else if (type == short.class) {
                args[i] = (short) (i + 3);
            } else if (type == byte.class) {
                args[i] = (byte) (i + 5);
            } else if (type == float.class) {
                args[i] = i + 0.5f;
            } else if (type == double.class) {
                args[i] = i + 0.25d;
            } else if (type == String.class) {
                args[i] = "arg" + i;
            } else {
                args[i] = null;
            }
        }
        return args;
    }

    private static Object defaultValue(Class<?> type) {
        if (!type.isPrimitive() || type == void.class) {
            return null;
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == long.class) {
            return 0L;
        }
        return 0;
    }
}
