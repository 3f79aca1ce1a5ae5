package io.github.hibernaterouting.sample.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.StaleReplicaReadException;
import jakarta.persistence.OptimisticLockException;
import jakarta.persistence.PersistenceException;
import jakarta.persistence.RollbackException;
import jakarta.servlet.ServletException;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.hibernate.exception.JDBCConnectionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The status of each kind of failure. The HTTP tests ({@code ErrorResponsesIT}) provoke most of them
 * for real; a {@link StaleReplicaReadException} cannot be provoked through the sample's endpoints (its
 * mutations read on the primary and its entities are versioned), so it is checked here.
 */
class ApiErrorTest {
    @Test
    void conflicts_are409() {
        assertThat(ApiError.of(new StaleReplicaReadException("Note", 1L, "was changed"))
                        .status())
                .isEqualTo(409);
        assertThat(ApiError.of(new PersistenceException(
                                "flush", new StaleReplicaReadException("Note", 1L, "was deleted")))
                        .status())
                .isEqualTo(409);
        assertThat(ApiError.of(new RollbackException("commit", new OptimisticLockException("row count")))
                        .status())
                .isEqualTo(409);
        assertThat(ApiError.of(sql("23505")).status()).isEqualTo(409);
    }

    @ParameterizedTest
    @CsvSource({
        "08006, 503", // I/O error: the server went away
        "08001, 503", // could not connect
        "57P01, 503", // terminated by administrator (shutdown)
        "57P03, 503", // cannot connect now (starting up)
        "53300, 503", // too many connections
        "40001, 503", // serialization failure, also a standby's recovery conflict
        "40P01, 503", // deadlock
        "55P03, 503", // lock not available
        "57014, 503", // statement timeout
        "22021, 400", // a value the database cannot store
        "42P01, 500", // a table is missing: the server's fault
    })
    void sqlStates(String state, int status) {
        final ApiError error = ApiError.of(new ServletException(new PersistenceException("x", sql(state))));
        assertThat(error.status()).isEqualTo(status);
        assertThat(error.isTemporary()).isEqualTo(status == 503);
    }

    @Test
    void poolTimeoutAndMarker_are503() {
        final SQLTransientConnectionException timeout = new SQLTransientConnectionException(
                "hibernate-routing-primary - Connection is not available, request timed out after 500ms");
        assertThat(ApiError.of(new JDBCConnectionException("Could not prepare statement", timeout))
                        .status())
                .isEqualTo(503);
        assertThat(ApiError.of(new ConsistencyMarkerException("Could not store", new RuntimeException()))
                        .status())
                .isEqualTo(503);
    }

    @Test
    void jakartaRestExceptions_keepTheirStatus_andEverythingElseIs500() {
        assertThat(ApiError.of(new NotFoundException()).status()).isEqualTo(404);
        assertThat(ApiError.of(new NotAllowedException("GET")).status()).isEqualTo(405);
        assertThat(ApiError.of(new IllegalStateException("bug")).status()).isEqualTo(500);
        assertThat(ApiError.of(new IllegalStateException("bug")).isServerFault())
                .isTrue();
    }

    @Test
    void messagesAndBodies_nameNoClassNorSql() {
        final Throwable[] failures = {
            new StaleReplicaReadException("io.github.Note", 1L, "was changed"),
            new JDBCConnectionException("select * from users", new SQLTransientConnectionException("x")),
            sql("42P01"),
            new NotFoundException("io.github.hibernaterouting.sample.web.NotesResource"),
        };
        for (Throwable failure : failures) {
            assertThat(ApiError.of(failure).json("id-1"))
                    .doesNotContainPattern("(?i)exception|io\\.github|select|users|\\bsql");
        }
    }

    @Test
    void json_escapesTheMessageAndTheId() {
        assertThat(new ApiError(400, "a \"quoted\"\n\\ \u0001").json("r-1"))
                .isEqualTo("{\"error\":\"a \\\"quoted\\\"\\n\\\\ \\u0001\",\"status\":400,\"requestId\":\"r-1\"}");
        assertThat(new ApiError(500, "x").json(null)).endsWith("\"requestId\":null}");
    }

    private static SQLException sql(String state) {
        return new SQLException("ERROR: something on table notes", state);
    }
}
