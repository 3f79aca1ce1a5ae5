package io.github.hibernaterouting.routing;

/**
 * A consistency token that reads cannot use: malformed, a position no PostgreSQL WAL can have, or
 * ahead of the primary's current position, so that no write returned it.
 *
 * <p>Thrown by {@link ConsistencyToken#parse} and {@link ReadYourWrites#checkToken}; the servlet
 * filter answers {@code 400} with {@link #reason()}. A client that sends back, unchanged, a token it
 * received after a write never gets it.
 */
public class InvalidConsistencyTokenException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String reason;

    /**
     * @param token the token's text as received, shortened by the caller if need be
     * @param reason why it cannot be used, in words a client can act on
     */
    public InvalidConsistencyTokenException(String token, String reason) {
        super("Not a usable consistency token: '" + token + "': " + reason);
        this.reason = reason;
    }

    /** Why the token cannot be used, without the token itself (for messages that quote it their own way). */
    public String reason() {
        return reason;
    }
}
