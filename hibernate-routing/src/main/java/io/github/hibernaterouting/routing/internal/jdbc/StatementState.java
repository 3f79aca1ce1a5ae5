package io.github.hibernaterouting.routing.internal.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * What was set on a prepared statement, besides its parameters ({@link ParameterValues}), that the
 * same statement prepared on another connection needs too: the parameter sets of its pending batch,
 * and the properties that change how it runs (fetch size and direction, row limits, query timeout,
 * field size, escape processing, poolable, close-on-completion, cursor name). Created at the first
 * such setter; most statements never need one. Not thread-safe.
 */
final class StatementState {
    private static final int FETCH_SIZE = 1;
    private static final int FETCH_DIRECTION = 1 << 1;
    private static final int MAX_ROWS = 1 << 2;
    private static final int LARGE_MAX_ROWS = 1 << 3;
    private static final int MAX_FIELD_SIZE = 1 << 4;
    private static final int QUERY_TIMEOUT = 1 << 5;
    private static final int ESCAPE_PROCESSING = 1 << 6;
    private static final int POOLABLE = 1 << 7;
    private static final int CLOSE_ON_COMPLETION = 1 << 8;
    private static final int CURSOR_NAME = 1 << 9;

    /** The parameter sets added to the batch since it was last executed or cleared; null if none. */
    private List<ParameterValues> batch;

    /** Which properties were set. */
    private int set;

    private int fetchSize;
    private int fetchDirection;
    private int maxRows;
    private long largeMaxRows;
    private int maxFieldSize;
    private int queryTimeout;
    private boolean escapeProcessing;
    private boolean poolable;
    private String cursorName;

    void fetchSize(int rows) {
        fetchSize = rows;
        set |= FETCH_SIZE;
    }

    /** The fetch size set, 0 if none. */
    int fetchSize() {
        return (set & FETCH_SIZE) != 0 ? fetchSize : 0;
    }

    void fetchDirection(int direction) {
        fetchDirection = direction;
        set |= FETCH_DIRECTION;
    }

    void maxRows(int rows) {
        // setMaxRows and setLargeMaxRows set the same limit: the later one counts.
        maxRows = rows;
        set = (set | MAX_ROWS) & ~LARGE_MAX_ROWS;
    }

    void largeMaxRows(long rows) {
        largeMaxRows = rows;
        set = (set | LARGE_MAX_ROWS) & ~MAX_ROWS;
    }

    void maxFieldSize(int bytes) {
        maxFieldSize = bytes;
        set |= MAX_FIELD_SIZE;
    }

    void queryTimeout(int seconds) {
        queryTimeout = seconds;
        set |= QUERY_TIMEOUT;
    }

    void escapeProcessing(boolean enable) {
        escapeProcessing = enable;
        set |= ESCAPE_PROCESSING;
    }

    void poolable(boolean poolable) {
        this.poolable = poolable;
        set |= POOLABLE;
    }

    void closeOnCompletion() {
        set |= CLOSE_ON_COMPLETION;
    }

    void cursorName(String name) {
        cursorName = name;
        set |= CURSOR_NAME;
    }

    /** {@code addBatch()}: the current parameters become one entry of the batch; they stay set. */
    void addBatch(ParameterValues parameters) {
        if (batch == null) {
            batch = new ArrayList<>();
        }
        batch.add(parameters == null ? new ParameterValues() : parameters.copy());
    }

    /** {@code clearBatch()}, or the batch ran (JDBC empties it either way). */
    void clearBatch() {
        batch = null;
    }

    /**
     * Sets what was set on a statement on {@code target}, prepared anew: the properties, then the batch
     * entries, then the current parameters.
     *
     * @param state the properties and batch, or null if none was set
     * @param parameters the current parameters, or null if none was set
     */
    static void replay(StatementState state, ParameterValues parameters, PreparedStatement target) throws SQLException {
        if (state != null) {
            state.replayOn(target);
        }
        if (parameters != null) {
            parameters.applyTo(target);
        }
    }

    private void replayOn(PreparedStatement target) throws SQLException {
        if ((set & FETCH_SIZE) != 0) {
            target.setFetchSize(fetchSize);
        }
        if ((set & FETCH_DIRECTION) != 0) {
            target.setFetchDirection(fetchDirection);
        }
        if ((set & MAX_ROWS) != 0) {
            target.setMaxRows(maxRows);
        }
        if ((set & LARGE_MAX_ROWS) != 0) {
            target.setLargeMaxRows(largeMaxRows);
        }
        if ((set & MAX_FIELD_SIZE) != 0) {
            target.setMaxFieldSize(maxFieldSize);
        }
        if ((set & QUERY_TIMEOUT) != 0) {
            target.setQueryTimeout(queryTimeout);
        }
        if ((set & ESCAPE_PROCESSING) != 0) {
            target.setEscapeProcessing(escapeProcessing);
        }
        if ((set & POOLABLE) != 0) {
            target.setPoolable(poolable);
        }
        if ((set & CURSOR_NAME) != 0) {
            target.setCursorName(cursorName);
        }
        if ((set & CLOSE_ON_COMPLETION) != 0) {
            target.closeOnCompletion();
        }
        if (batch != null) {
            // Each entry is the whole parameter set at its addBatch, as the driver copied it.
            for (int i = 0; i < batch.size(); i++) {
                if (i > 0) {
                    target.clearParameters();
                }
                batch.get(i).applyTo(target);
                target.addBatch();
            }
            target.clearParameters();
        }
    }
}
