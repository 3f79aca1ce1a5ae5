package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.routing.ConsistencyToken;
import java.security.Principal;

/**
 * The user a request was authenticated as: the request's {@link Principal}.
 *
 * @param id the user's id, also the routing actor key
 * @param name the user's display name
 * @param canWrite whether the user's key may create, change and delete notes
 * @param stamp the user's last commit position as read from the primary at authentication, or {@code null}
 */
public record AuthenticatedUser(long id, String name, boolean canWrite, ConsistencyToken stamp) implements Principal {
    @Override
    public String getName() {
        return name;
    }

    /** The actor key the routing library tracks this user's writes under. */
    public String actorKey() {
        return Long.toString(id);
    }
}
