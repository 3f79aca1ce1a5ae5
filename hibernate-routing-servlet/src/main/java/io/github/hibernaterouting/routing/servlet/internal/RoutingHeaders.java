package io.github.hibernaterouting.routing.servlet.internal;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.InvalidConsistencyTokenException;
import java.util.Enumeration;
import java.util.Locale;
import java.util.UUID;

/**
 * Reads the request headers that ask for freshness, strictly: a value the filter cannot use is an
 * {@link InvalidHeaderException}, never ignored. Each header may occur several times or carry a
 * comma-separated list (as proxies combine them); every element is checked. Stateless.
 */
public final class RoutingHeaders {
    public static final String CONSISTENCY_TOKEN = "X-Consistency-Token";
    public static final String FORCE_PRIMARY = "X-Force-Primary";
    public static final String CONSISTENCY = "Consistency";
    public static final String REQUEST_ID = "X-Request-Id";

    private static final int MAX_REQUEST_ID = 100;
    private static final int MAX_ECHO = 40;

    private RoutingHeaders() {}

    /** A header value the filter cannot use; the message names the header and the fix, for a 400 answer. */
    public static final class InvalidHeaderException extends Exception {
        private static final long serialVersionUID = 1L;

        private final String header;

        InvalidHeaderException(String header, String message) {
            super(message);
            this.header = header;
        }

        /** The header that was wrong. */
        public String header() {
            return header;
        }
    }

    /**
     * Whether {@code X-Force-Primary} asks for the primary: {@code true} does, {@code false} or no
     * header does not (case is ignored).
     *
     * @throws InvalidHeaderException for any other value
     */
    public static boolean forcePrimary(Enumeration<String> values) throws InvalidHeaderException {
        boolean force = false;
        while (values != null && values.hasMoreElements()) {
            for (String element : values.nextElement().split(",", -1)) {
                final String value = element.trim();
                if (value.equalsIgnoreCase("true")) {
                    force = true;
                } else if (!value.equalsIgnoreCase("false")) {
                    throw new InvalidHeaderException(
                            FORCE_PRIMARY,
                            "Invalid " + FORCE_PRIMARY + " header " + echo(value)
                                    + ": the allowed values are 'true' (read from the primary) and 'false' (no effect). "
                                    + "Send '" + FORCE_PRIMARY + ": true' or leave the header out.");
                }
            }
        }
        return force;
    }

    /**
     * Whether {@code Consistency} asks for strong consistency (the primary): {@code strong} does, no
     * header does not.
     *
     * @throws InvalidHeaderException for any other value: clients can only ask for more freshness
     */
    public static boolean strongConsistency(Enumeration<String> values) throws InvalidHeaderException {
        boolean strong = false;
        while (values != null && values.hasMoreElements()) {
            for (String element : values.nextElement().split(",", -1)) {
                final String value = element.trim();
                if (!value.equalsIgnoreCase("strong")) {
                    throw new InvalidHeaderException(
                            CONSISTENCY,
                            "Invalid " + CONSISTENCY + " header " + echo(value)
                                    + ": the only allowed value is 'strong' (read from the primary); leave the header out for the default. "
                                    + "A client cannot ask for a replica.");
                }
                strong = true;
            }
        }
        return strong;
    }

    /**
     * The latest of the {@code X-Consistency-Token} values, or {@code null} without the header. Whether
     * the primary has reached it is checked later ({@link #refusedToken}).
     *
     * @throws InvalidHeaderException if a value is not a token, or has the top bit set
     */
    public static ConsistencyToken minimum(Enumeration<String> values) throws InvalidHeaderException {
        ConsistencyToken minimum = null;
        while (values != null && values.hasMoreElements()) {
            for (String element : values.nextElement().split(",", -1)) {
                final String value = element.trim();
                final ConsistencyToken token;
                try {
                    token = ConsistencyToken.parse(value);
                } catch (InvalidConsistencyTokenException e) {
                    throw refusedToken(value, e.reason());
                }
                minimum = token.max(minimum);
            }
        }
        return minimum;
    }

    /** The {@code 400} for an {@code X-Consistency-Token} value reads cannot use, saying why. */
    public static InvalidHeaderException refusedToken(String value, String reason) {
        return new InvalidHeaderException(
                CONSISTENCY_TOKEN,
                "Invalid " + CONSISTENCY_TOKEN + " header " + echo(value) + ": " + reason
                        + ". Send back, unchanged, the " + CONSISTENCY_TOKEN
                        + " of an earlier write's response, or leave the header out.");
    }

    /** Whether the request opens a subscription: server-sent events or a WebSocket upgrade. */
    public static boolean isSubscription(Enumeration<String> accept, Enumeration<String> upgrade) {
        while (accept != null && accept.hasMoreElements()) {
            if (accept.nextElement().toLowerCase(Locale.ROOT).contains("text/event-stream")) {
                return true;
            }
        }
        while (upgrade != null && upgrade.hasMoreElements()) {
            for (String protocol : upgrade.nextElement().split(",")) {
                if (protocol.trim().toLowerCase(Locale.ROOT).startsWith("websocket")) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The request id to use: {@code incoming} if it is 1 to 100 characters of {@code [A-Za-z0-9._-]},
     * else a new one (ids go into every log line, so anything else could forge or break log lines).
     */
    public static String requestId(String incoming) {
        return isValidRequestId(incoming) ? incoming : UUID.randomUUID().toString();
    }

    static boolean isValidRequestId(String id) {
        if (id == null || id.isEmpty() || id.length() > MAX_REQUEST_ID) {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            final char c = id.charAt(i);
            if (!(c >= 'a' && c <= 'z'
                    || c >= 'A' && c <= 'Z'
                    || c >= '0' && c <= '9'
                    || c == '.'
                    || c == '_'
                    || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** A client's value, quoted for an error message: printable ASCII only, shortened. */
    static String echo(String value) {
        final StringBuilder out = new StringBuilder("'");
        final int end = Math.min(value.length(), MAX_ECHO);
        for (int i = 0; i < end; i++) {
            final char c = value.charAt(i);
            out.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return out.append(value.length() > MAX_ECHO ? "...'" : "'").toString();
    }
}
