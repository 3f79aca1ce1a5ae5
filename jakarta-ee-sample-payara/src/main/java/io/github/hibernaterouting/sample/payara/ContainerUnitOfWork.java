package io.github.hibernaterouting.sample.payara;

import io.github.hibernaterouting.sample.domain.UnitOfWork;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import java.util.function.Function;

/**
 * {@link UnitOfWork} on the server: the container-managed, transaction-scoped {@link EntityManager}
 * of the persistence unit {@code sample}, in container-managed JTA transactions
 * ({@link Transactional}).
 *
 * <p>Reads run in a transaction too: a transaction-scoped persistence context lives exactly as long
 * as its JTA transaction, so that is what keeps a unit of work's reads and its {@code X-Served-By}
 * probe in one Hibernate session. The library still sends them to a replica, on a connection that
 * does not join the transaction; only writes, and what follows them, use the enlisted primary
 * connection. A call made inside a transaction joins it.
 */
@ApplicationScoped
public class ContainerUnitOfWork implements UnitOfWork {
    @PersistenceContext(unitName = "sample")
    private EntityManager em;

    @Resource
    private TransactionSynchronizationRegistry transactions;

    @Override
    @Transactional
    public <T> T read(Function<EntityManager, T> work) {
        return work.apply(em);
    }

    @Override
    @Transactional
    public <T> T write(Function<EntityManager, T> work) {
        final T result = work.apply(em);
        if (!transactions.getRollbackOnly()) {
            // Now, not in the commit: a failing statement surfaces as itself, not wrapped in a RollbackException.
            em.flush();
        }
        return result;
    }

    @Override
    public void setRollbackOnly(EntityManager entityManager) {
        transactions.setRollbackOnly();
    }
}
