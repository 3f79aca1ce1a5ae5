package io.github.hibernaterouting.routing.internal.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where the statements of a transaction begun with SQL and of a cursor run, on a fake JDBC layer:
 * every statement from {@code BEGIN} to its end on the server the {@code BEGIN} went to, a cursor's
 * statements where it was declared. {@code SqlTransactionControlIT} and {@code SqlCursorsIT} show the
 * same on a real primary and standbys.
 */
class SqlControlTest {
    private FakeServer primary;
    private FakeServer replica;
    private RoutingConnection connection;

    @BeforeEach
    void routedConnection() {
        primary = new FakeServer("primary", false);
        replica = new FakeServer("replica1", true);
        connection = FakeServer.routedConnection(primary, replica);
    }

    /** Prepares and runs {@code sql}; answers where it ran. */
    private String run(String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.execute();
        }
        final boolean onPrimary = !primary.prepared(sql).isEmpty();
        final boolean onReplica = !replica.prepared(sql).isEmpty();
        assertThat(onPrimary && onReplica).as("%s ran on one server", sql).isFalse();
        primary.statements.removeIf(statement -> statement.sql.equals(sql));
        replica.statements.removeIf(statement -> statement.sql.equals(sql));
        return onPrimary ? "primary" : onReplica ? "replica" : "nowhere";
    }

    @Test
    void readWriteBegin_keepsEveryStatementOnThePrimary_untilItsEnd() throws SQLException {
        assertThat(run("begin")).isEqualTo("primary");
        assertThat(run("select 1")).isEqualTo("primary");
        assertThat(run("savepoint s")).isEqualTo("primary");
        assertThat(run("commit and chain")).isEqualTo("primary");
        assertThat(run("select 2")).isEqualTo("primary");
        assertThat(run("end")).isEqualTo("primary");
        assertThat(run("select 3")).as("routed as usual again").isEqualTo("replica");
    }

    @Test
    void readOnlyBegin_keepsEveryStatementOnItsReplica_writesToo() throws SQLException {
        assertThat(run("start transaction read only")).isEqualTo("replica");
        assertThat(run("insert into item (id) values (1)")).isEqualTo("replica");
        assertThat(run("abort")).isEqualTo("replica");
        assertThat(run("insert into item (id) values (2)")).isEqualTo("primary");
    }

    @Test
    void beginThatFailed_pinsNothing() throws SQLException {
        final PreparedStatement begin = connection.prepareStatement("begin");
        begin.close();
        assertThat(run("select 1")).as("prepared, never run").isEqualTo("replica");
    }

    @Test
    void cursorStatements_runWhereTheCursorWasDeclared_andUnknownCursorsOnThePrimary() throws SQLException {
        assertThat(run("declare c cursor with hold for select 1")).isEqualTo("replica");
        assertThat(run("insert into item (id) values (1)")).isEqualTo("primary");
        assertThat(run("fetch 1 from c")).as("after the unit of work escalated").isEqualTo("replica");
        assertThat(run("move first in C")).isEqualTo("replica");
        assertThat(run("close c")).isEqualTo("replica");
        assertThat(run("fetch 1 from c")).as("closed: unknown").isEqualTo("primary");
        assertThat(run("fetch all in \"<unnamed portal 1>\"")).isEqualTo("primary");
    }
}
