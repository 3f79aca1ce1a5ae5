package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.quarkus.ReadOnly;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionManager;
import org.hibernate.Session;

/**
 * Makes the session and connection of a {@link ReadOnly} method's transaction read-only, inside the transaction
 * {@code @Transactional} began (after Narayana's interceptor), before its first statement.
 */
@ReadOnly
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_BEFORE + 300)
public class ReadOnlyInterceptor {
    private static final String APPLIED = ReadOnlyInterceptor.class.getName() + ".applied";

    @Inject
    TransactionManager transactions;

    @Inject
    EntityManager entityManager;

    @AroundInvoke
    Object readOnly(InvocationContext invocation) throws Exception {
        if (transactions.getStatus() != Status.STATUS_ACTIVE) {
            return invocation.proceed();
        }
        final Session session = entityManager.unwrap(Session.class);
        if (session.getProperties().get(APPLIED) == null) {
            session.setProperty(APPLIED, Boolean.TRUE);
            session.setDefaultReadOnly(true);
            // The routed connection of this transaction's session: read-only before its first statement.
            session.doWork(connection -> connection.setReadOnly(true));
        }
        return invocation.proceed();
    }
}
