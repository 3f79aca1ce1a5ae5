package io.github.hibernaterouting.routing.internal.jdbc;

import static io.github.hibernaterouting.routing.internal.jdbc.IsolationStatements.NONE;
import static io.github.hibernaterouting.routing.internal.jdbc.IsolationStatements.RESET;
import static io.github.hibernaterouting.routing.internal.jdbc.IsolationStatements.TRANSACTION;
import static java.sql.Connection.TRANSACTION_READ_COMMITTED;
import static java.sql.Connection.TRANSACTION_READ_UNCOMMITTED;
import static java.sql.Connection.TRANSACTION_REPEATABLE_READ;
import static java.sql.Connection.TRANSACTION_SERIALIZABLE;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class IsolationStatementsTest {
    @Test
    void transactionLevel_forTheCurrentTransaction() {
        assertThat(IsolationStatements.of("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
                .isEqualTo(TRANSACTION_REPEATABLE_READ | TRANSACTION);
        assertThat(IsolationStatements.of("set transaction read only, isolation level serializable, deferrable"))
                .isEqualTo(TRANSACTION_SERIALIZABLE | TRANSACTION);
        assertThat(IsolationStatements.of("set local transaction_isolation = 'read committed'"))
                .isEqualTo(TRANSACTION_READ_COMMITTED | TRANSACTION);
        assertThat(IsolationStatements.of("/* hint */ SET transaction_isolation TO \"read uncommitted\";"))
                .isEqualTo(TRANSACTION_READ_UNCOMMITTED | TRANSACTION);
    }

    @Test
    void sessionDefault_forTheTransactionsAfterIt() {
        assertThat(IsolationStatements.of("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE"))
                .isEqualTo(TRANSACTION_SERIALIZABLE);
        assertThat(IsolationStatements.of("set default_transaction_isolation='repeatable read'"))
                .isEqualTo(TRANSACTION_REPEATABLE_READ);
        assertThat(IsolationStatements.of("SET SESSION default_transaction_isolation TO 'serializable' -- why not"))
                .isEqualTo(TRANSACTION_SERIALIZABLE);
        assertThat(IsolationStatements.level(IsolationStatements.of("set default_transaction_isolation = default")))
                .isEqualTo(NONE);
    }

    @Test
    void reset_backToTheDefault() {
        assertThat(IsolationStatements.of("RESET ALL")).isEqualTo(RESET);
        assertThat(IsolationStatements.of("reset default_transaction_isolation"))
                .isEqualTo(RESET);
        assertThat(IsolationStatements.of("set default_transaction_isolation to default"))
                .isEqualTo(RESET);
    }

    @Test
    void otherStatements_changeNothing() {
        assertThat(IsolationStatements.of("SET search_path = public")).isEqualTo(NONE);
        assertThat(IsolationStatements.of("SET TRANSACTION READ ONLY")).isEqualTo(NONE);
        assertThat(IsolationStatements.of("set local default_transaction_isolation = 'serializable'"))
                .as("changes no transaction that could still start in this one")
                .isEqualTo(NONE);
        assertThat(IsolationStatements.of("reset search_path")).isEqualTo(NONE);
        assertThat(IsolationStatements.of("begin isolation level serializable")).isEqualTo(NONE);
        assertThat(IsolationStatements.of("set transaction isolation level serializable; select 1"))
                .as("a script")
                .isEqualTo(NONE);
        assertThat(IsolationStatements.of("select 'set transaction isolation level serializable'"))
                .isEqualTo(NONE);
    }
}
