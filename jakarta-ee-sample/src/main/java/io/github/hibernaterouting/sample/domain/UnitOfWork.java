package io.github.hibernaterouting.sample.domain;

import jakarta.persistence.EntityManager;
import java.util.function.Function;

/**
 * Where the sample's code gets its {@link EntityManager} and its transaction: from whichever the
 * deployment provides. The resources, the authentication filter and the worker call only this, so
 * the same code runs resource-local on the embedded Jetty ({@link ResourceLocalUnitOfWork}) and
 * container-managed on a Jakarta EE server (a bean with {@code @PersistenceContext} and
 * {@code @Transactional}, in the {@code jakarta-ee-sample-payara} module).
 *
 * <p>Each call is one unit of work with one persistence context: its reads and writes, and the
 * {@code X-Served-By} probe at its end, are routed together. Implementations are thread-safe; the
 * {@code EntityManager} handed to {@code work} is not, and must not escape it.
 */
public interface UnitOfWork {
    /**
     * Runs {@code work} that only reads. Reads follow the caller's routing scope (a replica unless
     * that would hide the actor's own writes).
     */
    <T> T read(Function<EntityManager, T> work);

    /**
     * Runs {@code work} in one transaction and returns its result once that transaction has
     * committed; rolls it back if {@code work} throws or called {@link #setRollbackOnly}. Pending
     * changes are flushed before the commit, so that a failing statement (an optimistic-lock
     * conflict, a constraint) surfaces as the {@code PersistenceException} itself.
     */
    <T> T write(Function<EntityManager, T> work);

    /**
     * Marks the transaction of the running {@link #write} rollback-only: it ends in a rollback,
     * nothing it wrote is kept and no commit position is recorded.
     *
     * @param em the {@code EntityManager} {@link #write} handed to the work
     */
    void setRollbackOnly(EntityManager em);
}
