package io.github.hibernaterouting.routing.servlet.spi;

import io.github.hibernaterouting.routing.ConsistencyToken;
import java.util.Objects;

/**
 * Whoever must see their own writes in a request: a user, an API key, a service identity.
 *
 * <p>Applications that load the user row on the primary during authentication should read the
 * stamp column in the same query and pass it here: the filter then needs no extra round trip to
 * learn how fresh the actor's reads must be.
 *
 * @param key the actor's key, as the library stores stamps and Redis markers under it: 1 to 200
 * characters, not blank; never a secret, since it appears in Redis keys
 * @param stamp the WAL position of the actor's last committed write, or {@code null} if unknown
 * (the library then uses what this instance's memory and the Redis marker know)
 */
public record Actor(String key, ConsistencyToken stamp) {
    /**
     * @throws IllegalArgumentException if the key is blank or longer than 200 characters
     */
    public Actor {
        Objects.requireNonNull(key, "key");
        if (key.isBlank() || key.length() > 200) {
            throw new IllegalArgumentException(
                    "An actor key must be 1 to 200 characters, not blank; got one of " + key.length() + " characters");
        }
    }

    /** An actor without a known stamp. */
    public static Actor of(String key) {
        return new Actor(key, null);
    }
}
