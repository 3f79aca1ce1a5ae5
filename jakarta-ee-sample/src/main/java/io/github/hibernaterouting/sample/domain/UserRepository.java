package io.github.hibernaterouting.sample.domain;

import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.Strategy;
import jakarta.persistence.EntityManager;
import java.util.Optional;

/** Looks users up; not thread-safe, like the {@link EntityManager} it wraps. */
public final class UserRepository {
    private final EntityManager em;

    public UserRepository(EntityManager em) {
        this.em = em;
    }

    /**
     * The user with this API key, read from the primary together with the user's stamp.
     *
     * <p>Authentication must see a key the moment it is created or revoked, and the stamp must be at
     * least as fresh as the user's last write (a replica could return an older one, and the user's
     * next read would then be allowed on a replica that has not replayed that write). One query on the
     * primary gives both, with no extra round trip.
     */
    public Optional<User> findByApiKeyOnPrimary(String apiKey) {
        return em.createQuery("from User u where u.apiKey = :key", User.class)
                .setParameter("key", apiKey)
                .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.PRIMARY))
                .getResultStream()
                .findFirst();
    }

    /** The user with this id, routed like any read of the request. */
    public Optional<User> findById(long id) {
        return Optional.ofNullable(em.find(User.class, id));
    }
}
