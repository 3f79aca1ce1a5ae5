package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.ReplicaSettings.ReplicaFailure;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.internal.consistency.ReadYourWritesTracker;
import io.github.hibernaterouting.routing.internal.metrics.RoutingMetrics;
import io.github.hibernaterouting.routing.internal.replicas.ReplicaSet;
import io.github.hibernaterouting.routing.internal.session.SessionRouting;
import io.github.hibernaterouting.routing.internal.session.StatelessScopeReads;
import io.github.hibernaterouting.routing.internal.session.WritePolicy;
import io.github.hibernaterouting.routing.sql.SqlClassifier;
import javax.sql.DataSource;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

/**
 * Makes the routed connections of one persistence unit, each with what it needs: where physical
 * connections come from, the classifier, the write policy and the read-your-writes bookkeeping.
 * Immutable and thread-safe.
 */
public final class JdbcRouting {
    /**
     * Makes a replica connection read-only for every transaction on it: run once on each new replica
     * connection, and again on one that a carried setting may have made writable.
     */
    public static final String READ_ONLY_SESSION = ReplicaSet.READ_ONLY_SESSION;

    private final SqlClassifier classifier;
    /** What this persistence unit's stateless sessions read on replicas, per routing scope. */
    private final StatelessScopeReads statelessScopeReads = new StatelessScopeReads();

    private final DataSource primary;
    private final ReplicaSet replicas;
    private final ReplicaFailure replicaFailure;
    private final long lsnWaitNanos;
    private final boolean transactionsOnPrimary;
    private final Strategy defaultStrategy;
    private final RoutingMetrics metrics;
    private final ReadYourWritesTracker tracker;
    private final WritePolicy writes;
    private final CommitCapture commits;
    /** The persistence unit's JTA transactions, or {@code null} when it is resource-local. */
    private final JtaTransactions jta;

    private final int configuredIsolation;
    private final boolean autoCommit;

    /**
     * @param primary where primary connections come from
     * @param lsnWaitNanos how long a read waits for a replica to reach the position it needs
     * @param transactionsOnPrimary {@code transactions=PRIMARY}: read-write transactions run on the primary from {@code begin}
     * @param defaultStrategy the persistence-unit default
     * @param configuredIsolation {@code hibernate.connection.isolation}, applied to the pools;
     *        {@link io.github.hibernaterouting.routing.internal.consistency.IsolationLevel#UNKNOWN} if not set
     * @param autoCommit whether routed connections start in auto-commit mode ({@code hibernate.connection.autocommit})
     * @param jta the persistence unit's JTA transactions, or {@code null} when it is resource-local
     */
    public JdbcRouting(
            SqlClassifier classifier,
            DataSource primary,
            ReplicaSet replicas,
            ReplicaFailure replicaFailure,
            long lsnWaitNanos,
            boolean transactionsOnPrimary,
            Strategy defaultStrategy,
            RoutingMetrics metrics,
            ReadYourWritesTracker tracker,
            WritePolicy writes,
            int configuredIsolation,
            boolean autoCommit,
            JtaTransactions jta) {
        this.classifier = classifier;
        this.primary = primary;
        this.replicas = replicas;
        this.replicaFailure = replicaFailure;
        this.lsnWaitNanos = lsnWaitNanos;
        this.transactionsOnPrimary = transactionsOnPrimary;
        this.defaultStrategy = defaultStrategy;
        this.metrics = metrics;
        this.tracker = tracker;
        this.writes = writes;
        this.commits = new CommitCapture(tracker, primary);
        this.jta = jta;
        this.configuredIsolation = configuredIsolation;
        this.autoCommit = autoCommit;
    }

    /**
     * A new routed connection, bound to no physical connection yet.
     *
     * @param primaryTenant opened with the {@code "primary"} connection identifier
     * @param readOnly for a Hibernate read-only session
     */
    public RoutingConnection connection(boolean primaryTenant, boolean readOnly) {
        final PhysicalConnections physicals =
                new PhysicalConnections(primary, replicas, replicaFailure, lsnWaitNanos, metrics, jta);
        physicals.configuredIsolation = configuredIsolation;
        // Without auto-commit (hibernate.connection.autocommit=false) a connection is in a transaction
        // from its first statement, as a pooled one would be.
        physicals.autoCommit = autoCommit;
        return new RoutingConnection(this, physicals, primaryTenant, readOnly);
    }

    /** The routing state of a new unit of work; {@code session} may be {@code null} for a connection used without one. */
    public SessionRouting newSessionRouting(SharedSessionContractImplementor session) {
        return new SessionRouting(defaultStrategy, metrics, session, statelessScopeReads);
    }

    SqlClassifier classifier() {
        return classifier;
    }

    boolean transactionsOnPrimary() {
        return transactionsOnPrimary;
    }

    ReadYourWritesTracker tracker() {
        return tracker;
    }

    WritePolicy writes() {
        return writes;
    }

    JtaTransactions jta() {
        return jta;
    }

    CommitCapture commits() {
        return commits;
    }
}
