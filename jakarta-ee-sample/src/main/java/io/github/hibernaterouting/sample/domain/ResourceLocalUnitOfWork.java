package io.github.hibernaterouting.sample.domain;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.EntityTransaction;
import java.util.Objects;
import java.util.function.Function;

/**
 * {@link UnitOfWork} for a resource-local persistence unit: a new {@link EntityManager} for each
 * call, and {@link EntityTransaction} boundaries around {@link #write}. Thread-safe.
 */
public final class ResourceLocalUnitOfWork implements UnitOfWork {
    private final EntityManagerFactory emf;

    public ResourceLocalUnitOfWork(EntityManagerFactory emf) {
        this.emf = Objects.requireNonNull(emf, "emf");
    }

    @Override
    public <T> T read(Function<EntityManager, T> work) {
        try (EntityManager em = emf.createEntityManager()) {
            return work.apply(em);
        }
    }

    @Override
    public <T> T write(Function<EntityManager, T> work) {
        try (EntityManager em = emf.createEntityManager()) {
            final EntityTransaction transaction = em.getTransaction();
            transaction.begin();
            try {
                final T result = work.apply(em);
                if (transaction.getRollbackOnly()) {
                    transaction.rollback();
                } else {
                    em.flush();
                    transaction.commit();
                }
                return result;
            } finally {
                if (transaction.isActive()) {
                    transaction.rollback();
                }
            }
        }
    }

    @Override
    public void setRollbackOnly(EntityManager em) {
        em.getTransaction().setRollbackOnly();
    }
}
