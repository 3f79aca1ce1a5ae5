package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.quarkus.ReadOnly;
import io.github.hibernaterouting.routing.quarkus.ReadOnlyTransactions;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionManager;

/**
 * Makes the session and connection of a {@link ReadOnly} method's transaction read-only, inside the transaction
 * {@code @Transactional} began (after Narayana's interceptor), before its first statement.
 */
@ReadOnly
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_BEFORE + 300)
public class ReadOnlyInterceptor {
    @Inject
    TransactionManager transactions;

    @Inject
    EntityManager entityManager;

    @AroundInvoke
    Object readOnly(InvocationContext invocation) throws Exception {
        if (transactions.getStatus() == Status.STATUS_ACTIVE) {
            ReadOnlyTransactions.markReadOnly(entityManager);
        }
        return invocation.proceed();
    }
}
