package io.github.hibernaterouting.routing.quarkus;

import jakarta.persistence.EntityManager;
import org.hibernate.Session;

/**
 * {@link ReadOnly} for transactions begun in code, such as {@code QuarkusTransaction}:
 *
 * <pre>{@code
 * List<Order> orders = QuarkusTransaction.requiringNew().call(() -> {
 *     ReadOnlyTransactions.markReadOnly(entityManager);
 *     return Order.listAll();
 * });
 * }</pre>
 */
public final class ReadOnlyTransactions {
    private static final String MARKED = ReadOnlyTransactions.class.getName() + ".marked";

    private ReadOnlyTransactions() {}

    /**
     * Makes the current transaction's session and connection read-only, so that its reads go to a replica as one
     * read-only transaction would; call it inside the transaction, before its first statement. A second call in the
     * same transaction does nothing.
     */
    public static void markReadOnly(EntityManager entityManager) {
        final Session session = entityManager.unwrap(Session.class);
        if (session.getProperties().get(MARKED) != null) {
            return;
        }
        session.setProperty(MARKED, Boolean.TRUE);
        session.setDefaultReadOnly(true);
        // The routed connection of this transaction's session, read-only before its first statement.
        session.doWork(connection -> connection.setReadOnly(true));
    }
}
