package io.github.hibernaterouting.it.matrix;

import io.github.hibernaterouting.it.matrix.MatrixHistory.ErrorKind;
import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import jakarta.persistence.OptimisticLockException;
import java.sql.SQLException;
import org.hibernate.StaleStateException;

/** What a caller can tell of a failure: its kind, and a one-line description for the report. */
final class Failures {
    private Failures() {}

    /**
     * A failure Hibernate did not throw: a {@code find} that answered null because its load failed inside a
     * transaction (HHH-12472). Counted as the connection failure it hides.
     */
    static final class HiddenFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        HiddenFailure(String message) {
            super(message);
        }
    }

    static ErrorKind kind(Throwable failure) {
        if (failure instanceof HiddenFailure) {
            return ErrorKind.CONNECTION;
        }
        if (has(failure, OptimisticLockException.class) || has(failure, StaleStateException.class)) {
            return ErrorKind.OPTIMISTIC;
        }
        if (has(failure, ConsistencyMarkerException.class)) {
            return ErrorKind.MARKER;
        }
        final String state = sqlState(failure);
        if (state == null) {
            return ErrorKind.OTHER;
        }
        if (state.equals("40001")) {
            return ErrorKind.SERIALIZATION;
        }
        return state.startsWith("08") || state.equals("57P01") ? ErrorKind.CONNECTION : ErrorKind.OTHER;
    }

    /** The SQLSTATE of the first {@link SQLException} in the cause chain that has one, or null. */
    static String sqlState(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                for (SQLException s = sql; s != null; s = s.getNextException()) {
                    if (s.getSQLState() != null) {
                        return s.getSQLState();
                    }
                }
            }
        }
        return null;
    }

    /** SQLSTATE, the outermost exception's type and the innermost message. */
    static String describe(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = String.valueOf(root.getMessage()).replace('\n', ' ');
        if (message.length() > 240 && !(root instanceof IllegalStateException)) {
            message = message.substring(0, 240) + "…";
        }
        final String state = sqlState(failure);
        return (state == null ? "" : "SQLSTATE " + state + " ")
                + failure.getClass().getSimpleName()
                + (root == failure ? "" : " (" + root.getClass().getSimpleName() + ")")
                + ": " + message;
    }

    private static boolean has(Throwable failure, Class<? extends Throwable> type) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }
}
