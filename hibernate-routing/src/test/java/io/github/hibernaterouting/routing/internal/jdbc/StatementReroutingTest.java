package io.github.hibernaterouting.routing.internal.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.internal.jdbc.FakeServer.FakeStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A statement prepared on a replica follows its unit of work at every execution: when the unit moved
 * (here: a write escalated it), each {@code execute*} variant and each batch runs the statement on the
 * primary, prepared there the way it was prepared first, with everything that was set on it; a
 * statement whose unit did not move is never prepared again. On a fake JDBC layer that records every
 * call; the ITs show the same on a real primary and standbys.
 */
class StatementReroutingTest {
    private static final String QUERY = "select name from item where id = ? and kind = ?";
    private static final String INSERT = "insert into item (id) values (?)";

    private FakeServer primary;
    private FakeServer replica;
    private RoutingConnection connection;

    @BeforeEach
    void routedConnection() {
        primary = new FakeServer("primary", false);
        replica = new FakeServer("replica1", true);
        connection = FakeServer.routedConnection(primary, replica);
    }

    @FunctionalInterface
    interface Execution {
        void run(PreparedStatement statement) throws SQLException;
    }

    static Stream<Arguments> executions() {
        return Stream.of(
                Arguments.of("executeQuery()", (Execution) PreparedStatement::executeQuery),
                Arguments.of("execute()", (Execution) PreparedStatement::execute),
                Arguments.of("executeUpdate()", (Execution) PreparedStatement::executeUpdate),
                Arguments.of("executeLargeUpdate()", (Execution) PreparedStatement::executeLargeUpdate));
    }

    /** A write prepared on the routed connection: it escalates the unit of work to the primary. */
    private void write() throws SQLException {
        connection.prepareStatement(INSERT).close();
    }

    private static FakeStatement only(List<FakeStatement> statements) {
        assertThat(statements).hasSize(1);
        return statements.get(0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("executions")
    void preparedOnAReplica_movesToThePrimaryAtItsNextExecution_withEverythingSetOnIt(String call, Execution execution)
            throws SQLException {
        final PreparedStatement query = connection.prepareStatement(QUERY);
        query.setFetchSize(50);
        query.setQueryTimeout(3);
        query.setMaxRows(10);
        query.setLong(1, 42);
        query.setString(2, "book");
        assertThat(only(replica.prepared(QUERY)).calls).doesNotContain(call);

        write();
        execution.run(query);

        final FakeStatement first = only(replica.prepared(QUERY));
        assertThat(first.executions()).as("nothing ran on the replica").isEmpty();
        assertThat(first.closed).as("the replica's statement is closed").isTrue();
        assertThat(only(primary.prepared(QUERY)).calls)
                .containsExactly(
                        "setFetchSize(50)",
                        "setMaxRows(10)",
                        "setQueryTimeout(3)",
                        "setLong(1, 42)",
                        "setString(2, book)",
                        call);
        assertThat(query.getConnection()).isSameAs(connection);

        // From now on it stays there: executed again, it is not prepared a third time.
        query.setLong(1, 43);
        execution.run(query);
        assertThat(only(primary.prepared(QUERY)).executions()).containsExactly(call, call);
    }

    @Test
    void whenTheUnitOfWorkDidNotMove_theStatementIsNeverPreparedAgain() throws SQLException {
        final PreparedStatement query = connection.prepareStatement(QUERY);
        query.setLong(1, 1);
        query.executeQuery().close();
        connection.prepareStatement("select 1").close();
        // A change that does not move this statement: it is routed again, and stays.
        connection.setReadOnly(false);
        query.setLong(1, 2);
        query.executeQuery().close();
        assertThat(only(replica.prepared(QUERY)).executions()).containsExactly("executeQuery()", "executeQuery()");
        assertThat(primary.prepared(QUERY)).isEmpty();
    }

    @Test
    void batch_runsWhereOneExecutionWould_withEveryEntryAddedBeforeTheMove() throws SQLException {
        final PreparedStatement query = connection.prepareStatement(QUERY);
        query.setLong(1, 1);
        query.setString(2, "a");
        query.addBatch();
        query.clearParameters();
        query.setLong(1, 2);
        query.addBatch();
        write();
        assertThat(query.executeBatch()).hasSize(2);
        assertThat(only(primary.prepared(QUERY)).calls)
                .containsExactly(
                        "setLong(1, 1)",
                        "setString(2, a)",
                        "addBatch()",
                        "clearParameters()",
                        "setLong(1, 2)",
                        "addBatch()",
                        "clearParameters()",
                        "setLong(1, 2)",
                        "executeBatch()");
        assertThat(only(replica.prepared(QUERY)).executions()).isEmpty();
    }

    @Test
    void largeBatch_movesToo_andAnExecutedBatchIsNotReplayedAgain() throws SQLException {
        final PreparedStatement query = connection.prepareStatement(QUERY);
        query.setLong(1, 1);
        query.addBatch();
        query.executeLargeBatch();
        query.setLong(1, 2);
        query.addBatch();
        write();
        assertThat(query.executeLargeBatch()).hasSize(1);
        assertThat(only(primary.prepared(QUERY)).calls)
                .containsExactly(
                        "setLong(1, 2)", "addBatch()", "clearParameters()", "setLong(1, 2)", "executeLargeBatch()");
    }

    static Stream<Arguments> preparations() {
        return Stream.of(
                Arguments.of((Preparation) (c, sql) -> c.prepareStatement(sql), ""),
                Arguments.of(
                        (Preparation) (c, sql) ->
                                c.prepareStatement(sql, ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_READ_ONLY),
                        "1004, 1007"),
                Arguments.of(
                        (Preparation) (c, sql) -> c.prepareStatement(
                                sql,
                                ResultSet.TYPE_FORWARD_ONLY,
                                ResultSet.CONCUR_READ_ONLY,
                                ResultSet.HOLD_CURSORS_OVER_COMMIT),
                        "1003, 1007, 1"),
                Arguments.of((Preparation) (c, sql) -> c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS), "1"),
                Arguments.of((Preparation) (c, sql) -> c.prepareStatement(sql, new int[] {1, 2}), "[1, 2]"),
                Arguments.of((Preparation) (c, sql) -> c.prepareStatement(sql, new String[] {"id"}), "[id]"));
    }

    @FunctionalInterface
    interface Preparation {
        PreparedStatement prepare(Connection connection, String sql) throws SQLException;
    }

    @ParameterizedTest(name = "prepareStatement(sql, {1})")
    @MethodSource("preparations")
    void aMovedStatement_isPreparedTheWayItWasPreparedFirst(Preparation preparation, String arguments)
            throws SQLException {
        final PreparedStatement query = preparation.prepare(connection, QUERY);
        write();
        query.executeQuery();
        assertThat(only(replica.prepared(QUERY)).prepareArguments).isEqualTo(arguments);
        assertThat(only(primary.prepared(QUERY)).prepareArguments).isEqualTo(arguments);
    }

    @Test
    void aStatementOutlivesItsPhysicalConnection_andIsPreparedAgainOnTheNextOne() throws SQLException {
        connection.setAutoCommit(false);
        final PreparedStatement query = connection.prepareStatement(QUERY);
        query.setLong(1, 7);
        query.executeQuery();
        // The transaction ends: every physical connection goes back to its pool.
        connection.commit();
        query.executeQuery();
        final List<FakeStatement> onReplica = replica.prepared(QUERY);
        assertThat(onReplica).hasSize(2);
        assertThat(onReplica.get(0).connection).isNotSameAs(onReplica.get(1).connection);
        assertThat(onReplica.get(1).calls).containsExactly("setLong(1, 7)", "executeQuery()");
    }

    @Test
    void aClosedStatement_staysClosed() throws SQLException {
        final PreparedStatement query = connection.prepareStatement(QUERY);
        query.close();
        write();
        assertThatThrownBy(query::executeQuery).hasMessageContaining("closed");
        assertThat(primary.prepared(QUERY)).isEmpty();
    }

    @Test
    void aStatementOfAClosedConnection_failsAtItsNextExecution() throws SQLException {
        final PreparedStatement query = connection.prepareStatement(QUERY);
        connection.close();
        assertThatThrownBy(query::executeQuery)
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("Connection is closed");
    }
}
