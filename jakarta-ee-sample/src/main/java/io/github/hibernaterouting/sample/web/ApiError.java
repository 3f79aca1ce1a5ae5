package io.github.hibernaterouting.sample.web;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import jakarta.persistence.LockTimeoutException;
import jakarta.persistence.OptimisticLockException;
import jakarta.persistence.PessimisticLockException;
import jakarta.persistence.QueryTimeoutException;
import jakarta.ws.rs.WebApplicationException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.hibernate.StaleStateException;
import org.hibernate.exception.JDBCConnectionException;

/**
 * The API's error answer: a status and a JSON body {@code {"error": "…", "status": 503, "requestId": "…"}}
 * that never carries a stack trace, a class name or SQL; {@code 503} answers also carry
 * {@code Retry-After}. {@link #of(Throwable)} decides the status of an exception, by what the client
 * can do about it:
 *
 * <ul>
 *   <li>{@code 503}: temporary, retry ({@link #RETRY_AFTER_SECONDS} s later): no pooled connection became
 *       free in time, a server went away or refused connections during the request, the Redis
 *       consistency marker could not be stored ({@link ConsistencyMarkerException}), a serialization
 *       failure or deadlock (SQLSTATE {@code 40001}, {@code 40P01}, which includes a standby cancelling a
 *       query that conflicts with replay), a lock or statement timeout;
 *   <li>{@code 409}: the data changed since it was read: {@link OptimisticLockException},
 *       {@link StaleStateException} (which includes the library's {@code StaleReplicaReadException}), a
 *       constraint violation (SQLSTATE class {@code 23});
 *   <li>{@code 400}: the request itself is wrong: a body that is not the expected JSON, a value the
 *       database refuses (SQLSTATE class {@code 22});
 *   <li>the status of a Jakarta REST {@link WebApplicationException} ({@code 404}, {@code 405}, {@code 415}, …);
 *   <li>{@code 500} for anything else.
 * </ul>
 *
 * @param status the HTTP status
 * @param message what the client is told; written for a person, with no internals
 */
public record ApiError(int status, String message) {
    /** The {@code Retry-After} of every {@code 503}, in seconds. */
    public static final int RETRY_AFTER_SECONDS = 1;

    /** The SLF4J MDC key of the request id (the routing filter's, which {@link ApiErrorFilter} also sets). */
    public static final String MDC_REQUEST_ID = "requestId";

    /** How far down a cause chain to look (chains can be cyclic). */
    private static final int MAX_DEPTH = 32;

    /** An error answer with the default message of {@code status}. */
    public static ApiError ofStatus(int status) {
        return new ApiError(status, defaultMessage(status));
    }

    /** True for the {@code 5xx} answers that are the server's own fault (logged with their stack trace). */
    public boolean isServerFault() {
        return status >= 500 && status != 503;
    }

    /** True if the client should retry after {@link #RETRY_AFTER_SECONDS}. */
    public boolean isTemporary() {
        return status == 503;
    }

    /** The JSON body, with the request id the client can quote. */
    public Map<String, Object> body(String requestId) {
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        body.put("status", status);
        body.put("requestId", requestId);
        return body;
    }

    /** The same body as JSON text, for code outside Jakarta REST. */
    public String json(String requestId) {
        return "{\"error\":" + quote(message) + ",\"status\":" + status + ",\"requestId\":" + quote(requestId) + "}";
    }

    /** The body of an error answer from a resource: {@code message} with the current request's id. */
    public static Map<String, Object> body(int status, String message) {
        return new ApiError(status, message).body(currentRequestId());
    }

    /** The id of the request this thread serves ({@link ApiErrorFilter} sets it), or {@code null} outside a request. */
    public static String currentRequestId() {
        return ApiErrorFilter.currentRequestId();
    }

    /** What the API answers for {@code failure}; see the class comment. */
    public static ApiError of(Throwable failure) {
        // The most telling cause wins, wherever it is in the chain (Hibernate and Jakarta REST wrap).
        if (find(failure, ConsistencyMarkerException.class) != null) {
            return new ApiError(
                    503,
                    "Service unavailable: the consistency marker (Redis) could not be stored, so this write was "
                            + "refused before it ran and nothing was written. Retry in a second.");
        }
        if (find(failure, OptimisticLockException.class) != null || find(failure, StaleStateException.class) != null) {
            return new ApiError(409, "The data changed since it was read; read it again and retry.");
        }
        final ApiError bySqlState = bySqlState(failure);
        if (bySqlState != null) {
            return bySqlState;
        }
        if (find(failure, SQLTransientConnectionException.class) != null) {
            return new ApiError(503, "No database connection became free in time. Retry in a second.");
        }
        if (find(failure, JDBCConnectionException.class) != null
                || find(failure, SQLRecoverableException.class) != null) {
            return unreachable();
        }
        if (find(failure, LockTimeoutException.class) != null
                || find(failure, PessimisticLockException.class) != null
                || find(failure, QueryTimeoutException.class) != null) {
            return conflictRolledBack();
        }
        final WebApplicationException web = find(failure, WebApplicationException.class);
        if (web != null && web.getResponse() != null) {
            final int status = web.getResponse().getStatus();
            if (status == 400 && find(failure, JsonProcessingException.class) != null) {
                return badJson();
            }
            return ofStatus(status);
        }
        if (find(failure, JsonProcessingException.class) != null) {
            return badJson();
        }
        return ofStatus(500);
    }

    private static ApiError bySqlState(Throwable failure) {
        int depth = 0;
        for (Throwable t = failure; t != null && depth++ < MAX_DEPTH; t = next(t)) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                final String state = sql.getSQLState();
                if (state.startsWith("08") || state.startsWith("57P") || state.equals("53300")) {
                    // 08: connection exception; 57P01-03: the server shut down or is starting; 53300: too many clients.
                    return unreachable();
                }
                switch (state) {
                    case "40001", "40P01", "55P03", "57014":
                        // serialization failure (also a standby's recovery conflict), deadlock, lock not available,
                        // statement cancelled (timeout)
                        return conflictRolledBack();
                    default:
                        break;
                }
                if (state.startsWith("23")) {
                    return new ApiError(409, "The request conflicts with the current data; read it again and retry.");
                }
                if (state.startsWith("22")) {
                    return new ApiError(400, "The request has a value the database cannot store.");
                }
            }
        }
        return null;
    }

    private static ApiError unreachable() {
        return new ApiError(
                503, "A database server could not be reached or went away during the request. " + "Retry in a second.");
    }

    private static ApiError conflictRolledBack() {
        return new ApiError(
                503,
                "The request collided with concurrent work or a timeout and was rolled back. " + "Retry in a second.");
    }

    private static ApiError badJson() {
        return new ApiError(
                400, "The body is not the JSON this request expects: {\"title\": \"...\", \"body\": \"...\"}");
    }

    /** The message of a status without a more specific one. */
    static String defaultMessage(int status) {
        return switch (status) {
            case 400 -> "Bad request.";
            case 401 -> "Send 'Authorization: Bearer <api key>'";
            case 403 -> "Forbidden.";
            case 404 -> "Not found.";
            case 405 -> "This method is not allowed here.";
            case 406 -> "This resource answers application/json only.";
            case 409 -> "The data changed since it was read; read it again and retry.";
            case 413 -> "The request is too large.";
            case 415 -> "Send the body as 'Content-Type: application/json'.";
            case 503 -> "Service unavailable. Retry in a second.";
            default ->
                status >= 500
                        ? "Internal error. Quote the request id if you report it."
                        : "The request was not accepted (HTTP " + status + ").";
        };
    }

    private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
        int depth = 0;
        for (Throwable t = failure; t != null && depth++ < MAX_DEPTH; t = next(t)) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    private static Throwable next(Throwable t) {
        Throwable cause = t.getCause();
        if (cause == null && t instanceof jakarta.servlet.ServletException servlet) {
            cause = servlet.getRootCause();
        }
        if (cause == null && t instanceof SQLException sql) {
            cause = sql.getNextException();
        }
        return cause == t ? null : cause;
    }

    /** {@code value} as a JSON string literal. */
    static String quote(String value) {
        if (value == null) {
            return "null";
        }
        final StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            final char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
