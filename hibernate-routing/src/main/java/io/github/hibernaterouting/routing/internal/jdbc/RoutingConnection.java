package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import io.github.hibernaterouting.routing.internal.session.StatementRouter;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection a Hibernate session gets: it binds physical connections lazily, statement by
 * statement, to the primary or to a replica.
 *
 * <p>Every SQL string reaches the database through here, Hibernate's own and raw JDBC in
 * {@code doWork} alike, so this is where each statement is classified and routed
 * ({@link StatementRouter}), before it reaches any server. Inside a transaction the first write
 * moves the transaction to the primary; from then on the whole transaction stays there. The
 * physical connections, their shared state and the carried settings are {@link PhysicalConnections}'s;
 * this class holds the unit of work's binding and the transaction. Statements are never re-run
 * elsewhere: a failure surfaces.
 *
 * <p>Not thread-safe, like the session that uses it.
 */
public final class RoutingConnection extends ForwardingConnection implements SessionRouting.Routed {
    private static final int NONE = RoutedStatement.NONE;
    private static final Logger LOG = LoggerFactory.getLogger(RoutingConnection.class);

    private final JdbcRouting routing;
    private final boolean readOnlySession;
    private final PhysicalConnections physicals;
    private final LogicalTransaction transaction;
    private final UnitOfWorkRouter router;
    private boolean closed;

    RoutingConnection(
            JdbcRouting routing, PhysicalConnections physicals, boolean primaryTenant, boolean readOnlySession) {
        this.routing = routing;
        this.physicals = physicals;
        this.transaction = new LogicalTransaction(physicals, routing.commits(), routing.jta());
        this.router = new UnitOfWorkRouter(routing, physicals, transaction, primaryTenant);
        this.readOnlySession = readOnlySession;
        physicals.readOnly = readOnlySession;
    }

    /** Binds this connection to its session's routing state; called right after Hibernate acquired it. */
    public void attach(SessionRouting sessionRouting) {
        router.attach(sessionRouting);
    }

    /** The persistence unit's routing this connection belongs to. */
    public JdbcRouting routing() {
        return routing;
    }

    @Override
    public SessionRouting sessionRouting() {
        return router.sessionRouting();
    }

    @Override
    public boolean mayBeReadingReplicaData() {
        return router.mayBeReadingReplicaData();
    }

    /** The physical connection that must run {@code sql}. */
    private Connection route(String sql) throws SQLException {
        checkOpen();
        return router.route(sql);
    }

    /** Raw JDBC whose SQL is not known up front goes to the primary and counts as a write. */
    private Connection forRawJdbc(String what) throws SQLException {
        checkOpen();
        return router.rawJdbc(what);
    }

    /** Routes a statement prepared earlier again, before an execution; see {@link RoutedStatement}. */
    Connection routeAgain(String sql) throws SQLException {
        return route(sql);
    }

    /** A statement moved onto a replica: count it as reading replica data until it is closed. */
    void replicaStatementOpened(RoutedStatement statement) {
        router.replicaStatementOpened(statement);
    }

    private PreparedStatement prepared(Connection target, PreparedStatement statement, String sql) throws SQLException {
        return router.prepared(this, target, statement, sql, NONE, NONE, NONE, NONE, null);
    }

    private void checkOpen() throws SQLException {
        if (closed) {
            throw new SQLException("Connection is closed", "08003");
        }
    }

    @Override
    protected Connection delegate() throws SQLException {
        checkOpen();
        return physicals.any();
    }

    // ---- statements -----------------------------------------------------------------------------

    @Override
    public PreparedStatement prepareStatement(String sql) throws SQLException {
        final Connection target = route(sql);
        return prepared(target, target.prepareStatement(sql), sql);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency)
            throws SQLException {
        final Connection target = route(sql);
        return router.prepared(
                this,
                target,
                target.prepareStatement(sql, resultSetType, resultSetConcurrency),
                sql,
                resultSetType,
                resultSetConcurrency,
                NONE,
                NONE,
                null);
    }

    @Override
    public PreparedStatement prepareStatement(
            String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        final Connection target = route(sql);
        return router.prepared(
                this,
                target,
                target.prepareStatement(sql, resultSetType, resultSetConcurrency, resultSetHoldability),
                sql,
                resultSetType,
                resultSetConcurrency,
                resultSetHoldability,
                NONE,
                null);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
        final Connection target = route(sql);
        return router.prepared(
                this,
                target,
                target.prepareStatement(sql, autoGeneratedKeys),
                sql,
                NONE,
                NONE,
                NONE,
                autoGeneratedKeys,
                null);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
        final Connection target = route(sql);
        return router.prepared(
                this, target, target.prepareStatement(sql, columnIndexes), sql, NONE, NONE, NONE, NONE, columnIndexes);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
        final Connection target = route(sql);
        return router.prepared(
                this, target, target.prepareStatement(sql, columnNames), sql, NONE, NONE, NONE, NONE, columnNames);
    }

    @Override
    public Statement createStatement() throws SQLException {
        return forRawJdbc("a plain JDBC Statement").createStatement();
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency) throws SQLException {
        return forRawJdbc("a plain JDBC Statement").createStatement(resultSetType, resultSetConcurrency);
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency, int resultSetHoldability)
            throws SQLException {
        return forRawJdbc("a plain JDBC Statement")
                .createStatement(resultSetType, resultSetConcurrency, resultSetHoldability);
    }

    @Override
    public CallableStatement prepareCall(String sql) throws SQLException {
        return forRawJdbc("a CallableStatement").prepareCall(sql);
    }

    @Override
    public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency) throws SQLException {
        return forRawJdbc("a CallableStatement").prepareCall(sql, resultSetType, resultSetConcurrency);
    }

    @Override
    public CallableStatement prepareCall(
            String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        return forRawJdbc("a CallableStatement")
                .prepareCall(sql, resultSetType, resultSetConcurrency, resultSetHoldability);
    }

    // ---- transactions ---------------------------------------------------------------------------

    @Override
    public void setAutoCommit(boolean autoCommit) throws SQLException {
        checkOpen();
        if (physicals.autoCommit == autoCommit) {
            return;
        }
        if (autoCommit) {
            transaction.autoCommitOn();
            return;
        }
        transaction.begin();
        router.transactionBegun();
    }

    @Override
    public boolean getAutoCommit() throws SQLException {
        checkOpen();
        return physicals.autoCommit;
    }

    @Override
    public void commit() throws SQLException {
        checkOpen();
        transaction.commit();
    }

    @Override
    public void rollback() throws SQLException {
        checkOpen();
        transaction.rollback();
    }

    // A savepoint writes nothing: it neither escalates the unit of work nor counts as a write (Savepoints).
    @Override
    public Savepoint setSavepoint() throws SQLException {
        checkOpen();
        return physicals.savepoints.set(null, physicals);
    }

    @Override
    public Savepoint setSavepoint(String name) throws SQLException {
        checkOpen();
        return physicals.savepoints.set(name, physicals);
    }

    @Override
    public void rollback(Savepoint savepoint) throws SQLException {
        checkOpen();
        physicals.savepoints.rollback(savepoint, physicals);
    }

    @Override
    public void releaseSavepoint(Savepoint savepoint) throws SQLException {
        checkOpen();
        physicals.savepoints.release(savepoint, physicals);
    }

    @Override
    public void close() throws SQLException {
        if (closed) {
            return;
        }
        closed = true;
        router.released();
        // HikariCP rolls back a connection returned with an open JDBC transaction; one begun with SQL
        // and cursors are ended first.
        transaction.close();
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void abort(Executor executor) throws SQLException {
        closed = true;
        router.released();
        physicals.abort(executor);
    }

    // ---- connection state -----------------------------------------------------------------------

    @Override
    public void setReadOnly(boolean readOnly) throws SQLException {
        checkOpen();
        physicals.readOnly(readOnly || readOnlySession);
    }

    @Override
    public boolean isReadOnly() throws SQLException {
        checkOpen();
        return physicals.readOnly;
    }

    @Override
    public void setTransactionIsolation(int level) throws SQLException {
        checkOpen();
        physicals.isolation(level);
    }

    @Override
    public int getTransactionIsolation() throws SQLException {
        checkOpen();
        if (physicals.transactionIsolation != 0) {
            return physicals.transactionIsolation;
        }
        return physicals.isolation != null
                ? physicals.isolation
                : physicals.last != null ? physicals.last.getTransactionIsolation() : physicals.defaultIsolation();
    }

    @Override
    public void setSchema(String schema) throws SQLException {
        checkOpen();
        physicals.schema(schema);
    }

    @Override
    public String getSchema() throws SQLException {
        return physicals.schema != null ? physicals.schema : delegate().getSchema();
    }

    @Override
    public void setCatalog(String catalog) throws SQLException {
        // PostgreSQL has no catalog switching; pgjdbc ignores this too.
        checkOpen();
    }

    @Override
    public SQLWarning getWarnings() throws SQLException {
        checkOpen();
        return physicals.last != null ? physicals.last.getWarnings() : null;
    }

    @Override
    public void clearWarnings() throws SQLException {
        checkOpen();
        if (physicals.last != null) {
            physicals.last.clearWarnings();
        }
    }

    @Override
    public boolean isValid(int timeout) throws SQLException {
        return !closed && (physicals.last == null || physicals.last.isValid(timeout));
    }

    @Override
    public void setClientInfo(String name, String value) throws SQLClientInfoException {
        // Client info is connection state that would not follow a statement to another server.
        LOG.debug("Ignoring client info {} on a routed connection", name);
    }

    @Override
    public void setClientInfo(Properties properties) throws SQLClientInfoException {
        LOG.debug("Ignoring client info on a routed connection");
    }

    @Override
    public String getClientInfo(String name) {
        return null;
    }

    @Override
    public Properties getClientInfo() {
        return new Properties();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        if (type.isInstance(this)) {
            return type.cast(this);
        }
        // Driver-specific APIs (COPY, large objects, notifications) may write: the primary.
        return forRawJdbc("the driver's own API (" + type.getSimpleName() + ")").unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return type.isInstance(this) || delegate().isWrapperFor(type);
    }

    @Override
    public String toString() {
        return "RoutingConnection[" + physicals.describeLast() + "]";
    }
}
