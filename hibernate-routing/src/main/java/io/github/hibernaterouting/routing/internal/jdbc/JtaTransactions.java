package io.github.hibernaterouting.routing.internal.jdbc;

import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingSettings;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.SystemException;
import jakarta.transaction.Transaction;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntConsumer;
import org.hibernate.engine.transaction.jta.platform.spi.JtaPlatform;

/**
 * The JTA transactions of a persistence unit, seen through Hibernate's JTA platform: whether one is
 * active on the current thread, and a callback when it ends. The transaction boundary of a JTA
 * persistence unit, where a resource-local one has JDBC {@code commit}/{@code rollback}.
 * Thread-safe.
 */
public final class JtaTransactions {
    private final JtaPlatform platform;
    /**
     * The global transactions a write ran in that have not ended yet: each gets one callback, however
     * many routed connections wrote in it (Hibernate releases its connection after every statement in a
     * JTA persistence unit, so a transaction's writes come through many).
     */
    private final Set<Transaction> written = ConcurrentHashMap.newKeySet();

    public JtaTransactions(JtaPlatform platform) {
        this.platform = platform;
    }

    /** Whether a global transaction is active (or marked for rollback) on the current thread. */
    boolean active() {
        try {
            final int status = platform.getCurrentStatus();
            return status == Status.STATUS_ACTIVE || status == Status.STATUS_MARKED_ROLLBACK;
        } catch (SystemException e) {
            return false;
        }
    }

    /**
     * A write is about to run in the current global transaction: the first time for that transaction,
     * calls {@code beforeCompletion} inside it before it commits (after Hibernate's flush, whose
     * synchronization was registered first) and {@code afterCompletion} with its final status
     * ({@link Status#STATUS_COMMITTED}, {@link Status#STATUS_ROLLEDBACK}, …) once it ends, on the
     * thread that ends it.
     */
    void wrote(Runnable beforeCompletion, IntConsumer afterCompletion) {
        final Transaction transaction = current();
        if (transaction != null && !written.add(transaction)) {
            return;
        }
        platform.registerSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
                beforeCompletion.run();
            }

            @Override
            public void afterCompletion(int status) {
                if (transaction != null) {
                    written.remove(transaction);
                }
                afterCompletion.accept(status);
            }
        });
    }

    /**
     * A replica data source handed out a connection enlisted in the global transaction: a standby
     * cannot take part in one (it cannot prepare, and a second one-phase resource fails the commit),
     * and the replica's reads would be committed or rolled back with the primary's writes. Fails the
     * read, naming the fix, rather than counting the replica as down.
     */
    static RoutingConfigurationException replicaEnlisted(String node) {
        return RoutingConfigurationException.withMessage(
                RoutingSettings.REPLICA_DATASOURCES,
                "The data source of " + node + " in " + RoutingSettings.REPLICA_DATASOURCES
                        + " enlisted its connection in the JTA transaction; replica reads must never join a"
                        + " global transaction. Declare the replica data sources non-transactional (Open Liberty:"
                        + " transactional=\"false\" on the <dataSource>; Payara and other Jakarta EE servers:"
                        + " <transactional>false</transactional> in the <data-source>; WildFly: jta=\"false\"; a pool that"
                        + " is not JTA-aware, such as HikariCP, needs nothing)");
    }

    /** The current global transaction, or {@code null} if the platform does not say. */
    private Transaction current() {
        try {
            final var manager = platform.retrieveTransactionManager();
            return manager == null ? null : manager.getTransaction();
        } catch (SystemException e) {
            return null;
        }
    }
}
