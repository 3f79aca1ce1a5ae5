package io.github.hibernaterouting.routing.servlet.internal;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.servlet.internal.RoutingHeaders.InvalidHeaderException;
import jakarta.servlet.http.HttpServletRequest;

/**
 * What a request asks for: the position its reads must reflect (the later of the
 * {@code X-Consistency-Token} headers and the consistency cookie) and whether it must read from the
 * primary. Immutable.
 *
 * @param token the position reads must reflect, or {@code null}
 * @param tokenFromCookie whether the consistency cookie holds {@code token} (a header may hold it too)
 * @param forcePrimary {@code X-Force-Primary: true}
 * @param strong {@code Consistency: strong}
 */
public record RequestedFreshness(
        ConsistencyToken token, boolean tokenFromCookie, boolean forcePrimary, boolean strong) {
    /**
     * Reads the request's headers, and its consistency cookie if {@code cookie} is not {@code null}.
     *
     * @throws InvalidHeaderException naming the header or cookie that cannot be used, and the fix
     */
    public static RequestedFreshness of(HttpServletRequest request, ConsistencyCookie cookie)
            throws InvalidHeaderException {
        final ConsistencyToken fromCookie = cookie == null ? null : cookie.token(request.getCookies());
        final ConsistencyToken fromHeader =
                RoutingHeaders.minimum(request.getHeaders(RoutingHeaders.CONSISTENCY_TOKEN));
        final ConsistencyToken token = fromCookie == null ? fromHeader : fromCookie.max(fromHeader);
        return new RequestedFreshness(
                token,
                fromCookie != null && fromCookie.equals(token),
                RoutingHeaders.forcePrimary(request.getHeaders(RoutingHeaders.FORCE_PRIMARY)),
                RoutingHeaders.strongConsistency(request.getHeaders(RoutingHeaders.CONSISTENCY)));
    }

    /** The {@code 400} for a {@link #token} the primary refused, naming the cookie if it holds it, else the header. */
    public InvalidHeaderException refusedToken(ConsistencyCookie cookie, String reason) {
        return tokenFromCookie
                ? cookie.refused(token.toString(), reason)
                : RoutingHeaders.refusedToken(token.toString(), reason);
    }
}
