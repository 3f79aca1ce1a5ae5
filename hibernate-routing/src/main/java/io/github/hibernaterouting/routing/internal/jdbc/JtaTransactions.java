package io.github.hibernaterouting.routing.internal.jdbc;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.SystemException;
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
     * Calls {@code afterCompletion} with the transaction's final status ({@link Status#STATUS_COMMITTED},
     * {@link Status#STATUS_ROLLEDBACK}, …) once the current transaction ends, on the thread that ends it.
     */
    void afterCompletion(IntConsumer afterCompletion) {
        platform.registerSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {}

            @Override
            public void afterCompletion(int status) {
                afterCompletion.accept(status);
            }
        });
    }
}
