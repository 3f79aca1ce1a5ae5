package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.sample.SampleBootstrap;
import io.github.hibernaterouting.sample.domain.User;
import io.github.hibernaterouting.sample.domain.UserRepository;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.Locale;
import java.util.Optional;

/**
 * Authenticates {@code Authorization: Bearer <api key>} against the users table on the primary and
 * makes the user the request's principal ({@link AuthenticatedUser}); {@code 401} without a valid key,
 * {@code 403} when a read-only key tries to write.
 *
 * <p>Mapped before the routing filter in {@code web.xml}: authentication and authorisation run
 * before routing, and the routing filter takes the actor (and its stamp) from the principal.
 */
public class AuthenticationFilter extends HttpFilter {
    private static final long serialVersionUID = 1L;
    private static final String BEARER = "bearer ";

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        final String header = request.getHeader("Authorization");
        if (header == null
                || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())
                || header.substring(BEARER.length()).isBlank()) {
            reject(response, HttpServletResponse.SC_UNAUTHORIZED, "Send 'Authorization: Bearer <api key>'");
            return;
        }
        final Optional<AuthenticatedUser> user =
                authenticate(header.substring(BEARER.length()).trim());
        if (user.isEmpty()) {
            reject(response, HttpServletResponse.SC_UNAUTHORIZED, "Unknown API key");
            return;
        }
        if (isMutation(request.getMethod()) && !user.get().canWrite()) {
            reject(response, HttpServletResponse.SC_FORBIDDEN, "This API key is read-only");
            return;
        }
        chain.doFilter(new AuthenticatedRequest(request, user.get()), response);
    }

    private Optional<AuthenticatedUser> authenticate(String apiKey) {
        return SampleBootstrap.unitOfWork(getServletContext())
                .read(em ->
                        new UserRepository(em).findByApiKeyOnPrimary(apiKey).map(AuthenticationFilter::toPrincipal));
    }

    private static AuthenticatedUser toPrincipal(User user) {
        return new AuthenticatedUser(user.getId(), user.getName(), user.canWrite(), token(user.getReadAfterWriteLsn()));
    }

    /** A {@code pg_lsn} as PostgreSQL prints it ({@code 16/B374D848}) as a token; {@code null} stays {@code null}. */
    static ConsistencyToken token(String lsn) {
        if (lsn == null) {
            return null;
        }
        final int slash = lsn.indexOf('/');
        final long high = Long.parseLong(lsn.substring(0, slash), 16);
        final long low = Long.parseLong(lsn.substring(slash + 1), 16);
        return ConsistencyToken.ofPosition(high << 32 | low);
    }

    private static boolean isMutation(String method) {
        return switch (method.toUpperCase(Locale.ROOT)) {
            case "POST", "PUT", "PATCH", "DELETE" -> true;
            default -> false;
        };
    }

    private static void reject(HttpServletResponse response, int status, String message) throws IOException {
        response.setStatus(status);
        if (status == HttpServletResponse.SC_UNAUTHORIZED) {
            response.setHeader("WWW-Authenticate", "Bearer realm=\"sample\"");
        }
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        response.getWriter().write(new ApiError(status, message).json(ApiError.currentRequestId()));
    }

    /** The request with the authenticated user as its principal. */
    private static final class AuthenticatedRequest extends HttpServletRequestWrapper {
        private final AuthenticatedUser user;

        AuthenticatedRequest(HttpServletRequest request, AuthenticatedUser user) {
            super(request);
            this.user = user;
        }

        @Override
        public Principal getUserPrincipal() {
            return user;
        }

        @Override
        public String getRemoteUser() {
            return user.getName();
        }

        @Override
        public String getAuthType() {
            return "Bearer";
        }
    }
}
