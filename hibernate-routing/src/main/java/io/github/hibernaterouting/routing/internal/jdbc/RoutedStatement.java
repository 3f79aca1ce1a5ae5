package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.sql.Classification;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A prepared statement of a routed connection, for the statements whose running the connection
 * needs to know about; every other call passes through unchanged.
 * <ul>
 * <li>When it is given a fetch size: a read-write transaction's reads on a replica run in
 * auto-commit until a fetch size asks for a cursor, which pgjdbc only opens inside a transaction
 * ({@link PhysicalConnections#replicaCursorWanted}).</li>
 * <li>When it is a {@code SET} or {@code RESET} ({@code setting} not null) and has run: it is then
 * carried over to every other physical connection of the unit of work.</li>
 * <li>When it runs on a replica ({@code replicaReads} not null): until it is closed, what the session
 * reads may come from the replica, and must not fill Hibernate's caches.</li>
 * </ul>
 * {@link #getConnection()} answers the routed connection, never the physical one, so that code
 * holding a statement cannot bypass routing.
 */
final class RoutedStatement extends ForwardingPreparedStatement {
    private final Connection routed;
    private final PhysicalConnections physicals;
    private final Connection physical;
    /** The SQL of this statement if it is a {@code SET} or {@code RESET}, else {@code null}. */
    private final String setting;
    /** Its classification, with the setting's scope and name. */
    private final Classification settingClassification;
    /** A fetch size given to it may need a transaction on the replica. */
    private final boolean watchFetchSize;
    /** The router that counts this statement as open on a replica, else {@code null}. */
    private UnitOfWorkRouter replicaReads;

    RoutedStatement(
            PreparedStatement statement,
            Connection routed,
            PhysicalConnections physicals,
            Connection physical,
            String setting,
            Classification settingClassification,
            boolean watchFetchSize,
            UnitOfWorkRouter replicaReads) {
        super(statement);
        this.routed = routed;
        this.physicals = physicals;
        this.physical = physical;
        this.setting = setting;
        this.settingClassification = settingClassification;
        this.watchFetchSize = watchFetchSize;
        this.replicaReads = replicaReads;
    }

    /** After the statement ran without an error: a setting is recorded to be carried over. */
    private void ran() {
        if (setting != null) {
            physicals.settingRan(physical, setting, settingClassification);
        }
    }

    @Override
    public Connection getConnection() {
        return routed;
    }

    @Override
    public void setFetchSize(int rows) throws SQLException {
        if (rows > 0 && watchFetchSize) {
            physicals.replicaCursorWanted(physical);
        }
        delegate.setFetchSize(rows);
    }

    @Override
    public void close() throws SQLException {
        try {
            delegate.close();
        } finally {
            if (replicaReads != null) {
                replicaReads.replicaStatementClosed();
                replicaReads = null;
            }
        }
    }

    @Override
    public boolean execute() throws SQLException {
        final boolean result = delegate.execute();
        ran();
        return result;
    }

    @Override
    public ResultSet executeQuery() throws SQLException {
        final ResultSet result = delegate.executeQuery();
        ran();
        return result;
    }

    @Override
    public int executeUpdate() throws SQLException {
        final int result = delegate.executeUpdate();
        ran();
        return result;
    }

    @Override
    public long executeLargeUpdate() throws SQLException {
        final long result = delegate.executeLargeUpdate();
        ran();
        return result;
    }
}
