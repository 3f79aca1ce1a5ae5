package io.github.hibernaterouting.routing.servlet.spi;

import io.github.hibernaterouting.routing.ConsistencyToken;
import java.util.Objects;

/**
 * Whoever must see their own writes in a request: a user, an API key, a service identity.
 *
 * <p>A stamp given here is combined with what the library knows of the actor (this instance's
 * memory, the Redis marker, and with {@code actor_stamps=TABLE} the actors' table, which it reads
 * from the primary itself); the later wins.
 *
 * @param key the actor's key, as the library stores stamps and Redis markers under it: 1 to 200
 * characters, not blank; never a secret, since it appears in Redis keys
 * @param stamp a WAL position the actor's reads must reflect, for example the stamp column loaded
 * with the user row on the primary, or {@code null}
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
