package io.github.hibernaterouting.routing.servlet.internal;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.InvalidConsistencyTokenException;
import io.github.hibernaterouting.routing.servlet.internal.RoutingHeaders.InvalidHeaderException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The opt-in consistency cookie: read-your-writes for clients without an actor. After a mutation
 * that committed, the filter sets it to the commit's token; a later request's cookie is a floor,
 * exactly like an {@code X-Consistency-Token} header, and is checked as strictly. Immutable and
 * thread-safe.
 *
 * <p>Every cookie of the name the request carries is checked (a browser sends one per path and
 * domain that set it); the latest position counts. One that is not a token makes the request a
 * {@code 400}, whose answer clears the cookie so that the client's next request goes through.
 */
public final class ConsistencyCookie {
    /** The request header the cookie comes in: what {@link InvalidHeaderException#header()} names. */
    public static final String HEADER = "Cookie";
    /** Seconds the cookie lives by default: as long as an instance remembers an actor's stamp. */
    public static final int DEFAULT_MAX_AGE = 60;
    /** Seconds the cookie may live at most. */
    public static final int MAX_MAX_AGE = 86_400;

    private static final int MAX_NAME = 100;
    /** RFC 6265 (token of RFC 2616): what a cookie name must not contain besides controls, space and non-ASCII. */
    private static final String SEPARATORS = "()<>@,;:\\\"/[]?={}";
    /** What a name must be, for messages. */
    static final String NAME_RULE = "expected a cookie name of 1 to " + MAX_NAME
            + " visible ASCII characters without spaces or any of " + SEPARATORS + ", such as rl-consistency";

    private final String name;
    private final int maxAge;
    private final boolean alwaysSecure;
    private final boolean hostOnlyRoot;

    /**
     * @param name the cookie's name; a {@code __Secure-} or {@code __Host-} prefix makes it always
     *     {@code Secure}, and {@code __Host-} also {@code Path=/}, as browsers require of such names
     * @param maxAge seconds, 1 to {@value #MAX_MAX_AGE}
     * @param alwaysSecure {@code true}: {@code Secure} on every response; {@code false}: on responses to
     *     secure requests ({@link HttpServletRequest#isSecure()})
     * @throws IllegalArgumentException naming the bad argument
     */
    public ConsistencyCookie(String name, int maxAge, boolean alwaysSecure) {
        if (!isValidName(name)) {
            throw new IllegalArgumentException("'" + name + "' is not a cookie name: " + NAME_RULE);
        }
        if (maxAge < 1 || maxAge > MAX_MAX_AGE) {
            throw new IllegalArgumentException(
                    "the cookie's max age must be 1 to " + MAX_MAX_AGE + " seconds, not " + maxAge);
        }
        this.name = name;
        this.maxAge = maxAge;
        this.hostOnlyRoot = name.startsWith("__Host-");
        this.alwaysSecure = alwaysSecure || hostOnlyRoot || name.startsWith("__Secure-");
    }

    static boolean isValidName(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            final char c = name.charAt(i);
            if (c <= 0x20 || c >= 0x7f || SEPARATORS.indexOf(c) >= 0) {
                return false;
            }
        }
        return true;
    }

    /** The cookie's name. */
    public String name() {
        return name;
    }

    /** The cookie's lifetime in seconds. */
    public int maxAge() {
        return maxAge;
    }

    /**
     * The latest token among the request's cookies of this name, or {@code null} if it has none.
     * Whether the primary has reached it is checked later ({@link #refused}).
     *
     * @throws InvalidHeaderException naming the cookie (its {@link InvalidHeaderException#header()} is
     *     {@value #HEADER}) if one of them is not a token, or one with the top bit set
     */
    public ConsistencyToken token(Cookie[] cookies) throws InvalidHeaderException {
        ConsistencyToken latest = null;
        for (Cookie cookie : cookies == null ? new Cookie[0] : cookies) {
            if (cookie != null && name.equals(cookie.getName())) {
                final String value = cookie.getValue() == null ? "" : cookie.getValue();
                try {
                    latest = ConsistencyToken.parse(value).max(latest);
                } catch (InvalidConsistencyTokenException e) {
                    throw refused(value, e.reason());
                }
            }
        }
        return latest;
    }

    /** The {@code 400} for a cookie value reads cannot use, saying why and how the client gets past it. */
    public InvalidHeaderException refused(String value, String reason) {
        return new InvalidHeaderException(
                HEADER,
                "Invalid consistency cookie " + name + "=" + RoutingHeaders.echo(value) + ": " + reason
                        + ". This answer clears the cookie: repeat the request. The server sets the " + name
                        + " cookie after a write; do not set or change it.");
    }

    /** Sets the cookie to {@code token}, on a response that is not committed yet. */
    public void set(HttpServletRequest request, HttpServletResponse response, ConsistencyToken token) {
        response.addCookie(cookie(request, token.toString(), maxAge));
    }

    /** Clears the cookie (the same name, path and attributes, {@code Max-Age=0}). */
    public void clear(HttpServletRequest request, HttpServletResponse response) {
        response.addCookie(cookie(request, "", 0));
    }

    private Cookie cookie(HttpServletRequest request, String value, int age) {
        final Cookie cookie = new Cookie(name, value);
        final String contextPath = request.getContextPath();
        // Only the application that set it reads it back, unless the name asks for the whole host.
        cookie.setPath(hostOnlyRoot || contextPath == null || contextPath.isEmpty() ? "/" : contextPath);
        cookie.setMaxAge(age);
        cookie.setHttpOnly(true);
        cookie.setSecure(alwaysSecure || request.isSecure());
        // Not sent with requests that other sites start (images, forms, scripts), only with top-level navigations.
        cookie.setAttribute("SameSite", "Lax");
        return cookie;
    }
}
