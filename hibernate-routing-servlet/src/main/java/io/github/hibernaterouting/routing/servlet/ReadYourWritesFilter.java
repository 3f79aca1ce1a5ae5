package io.github.hibernaterouting.routing.servlet;

import io.github.hibernaterouting.routing.ConsistencyMarkerException;
import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.InvalidConsistencyTokenException;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.servlet.internal.BufferedResponse;
import io.github.hibernaterouting.routing.servlet.internal.ConsistencyCookie;
import io.github.hibernaterouting.routing.servlet.internal.EndpointRules;
import io.github.hibernaterouting.routing.servlet.internal.FilterInitParams;
import io.github.hibernaterouting.routing.servlet.internal.RequestRouting;
import io.github.hibernaterouting.routing.servlet.internal.RequestedFreshness;
import io.github.hibernaterouting.routing.servlet.internal.RoutingHeaders;
import io.github.hibernaterouting.routing.servlet.internal.RoutingHeaders.InvalidHeaderException;
import io.github.hibernaterouting.routing.servlet.spi.Actor;
import io.github.hibernaterouting.routing.servlet.spi.ActorResolver;
import jakarta.persistence.EntityManagerFactory;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.hibernate.JDBCException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Routes each HTTP request and keeps read-your-writes for its actor: the request level of routing.
 *
 * <p>Each request gets a new {@link RoutingScope}, closed when the request leaves the filter:
 * <ul>
 * <li>Mutations ({@code POST}, {@code PUT}, {@code PATCH}, {@code DELETE} and any method that is not
 * safe) run {@link Strategy#PRIMARY}. With an actor, the shared Redis marker is stored before the
 * handler runs; if it cannot be, the answer is {@code 503} with {@code Retry-After: 1} and the
 * handler never runs. The response is held back until the handler returned, so the actor's stamp
 * has advanced before the client can see anything; it carries the commit position in
 * {@value #CONSISTENCY_TOKEN_HEADER}.</li>
 * <li>Safe methods run {@link Strategy#READ_AFTER_WRITE} with the actor's stamp and any
 * {@value #CONSISTENCY_TOKEN_HEADER} as the minimum position, unless an endpoint rule names another
 * strategy. A token ahead of the primary's current position is a {@code 400}, before any replica is
 * asked ({@link ReadYourWrites#checkToken}). {@value #FORCE_PRIMARY_HEADER}{@code : true}, {@code Consistency: strong}, server-sent
 * events and WebSocket upgrades run on the primary. An invalid header value is a {@code 400} that
 * names the header and the fix.</li>
 * <li>What the client asks for is a freshness floor of the request's scope
 * ({@link RoutingScope.Builder#floor(Strategy)}): under {@value #FORCE_PRIMARY_HEADER}{@code : true} or
 * {@code Consistency: strong} every read runs on the primary, whatever query hint, EntityManager
 * property, {@code @RoutingStrategy} or nested scope the application uses; and every read, under
 * {@code STALE_READ} and {@code REPLICA} too, reflects the {@value #CONSISTENCY_TOKEN_HEADER} the
 * client sent. Endpoint rules and annotations are the application's choices, not floors.</li>
 * <li>Requests already rejected ({@code 401}/{@code 403} set before the filter) pass through
 * without a scope, a marker or a stamp.</li>
 * </ul>
 * Every request also gets a request id ({@value #REQUEST_ID_HEADER}, echoed in the response), in
 * the SLF4J MDC as {@value #MDC_REQUEST_ID} while the filter runs.
 *
 * <p>Map the filter after the application's authentication: the library's {@code web-fragment.xml}
 * does so by itself. Its persistence unit is the {@code EntityManagerFactory} in the servlet context
 * attribute {@value #ENTITY_MANAGER_FACTORY}, or the one given to the constructor. Init-params:
 * {@code actor-resolver} (class name of an {@link ActorResolver}), {@code rules} (endpoint rules,
 * such as {@code GET /auth/**=PRIMARY, /reports/*=STALE_READ}), {@code require-actor}
 * ({@code true} answers {@code 401} to requests without an actor), {@code mutation-buffer-limit} (bytes
 * of a mutation's response held in memory until the stamp advanced; default 1 MiB, the rest waits in
 * a temporary file), {@code consistency-cookie} (read-your-writes without an actor: the commit's token in a cookie,
 * honoured like {@value #CONSISTENCY_TOKEN_HEADER}; off by default), {@code consistency-cookie-max-age} and
 * {@code -secure}. Unknown init-params and bad values fail {@link #init}. Thread-safe once initialised.
 */
public final class ReadYourWritesFilter implements Filter {
    /** Servlet context attribute holding the persistence unit's {@link EntityManagerFactory}. */
    public static final String ENTITY_MANAGER_FACTORY =
            "io.github.hibernaterouting.routing.servlet.EntityManagerFactory";
    /** Init-param: class name of the {@link ActorResolver}; it needs a public no-argument constructor. */
    public static final String ACTOR_RESOLVER_PARAM = FilterInitParams.ACTOR_RESOLVER;
    /** Init-param: endpoint rules for safe methods, {@code [METHOD] /path/pattern=STRATEGY}, comma-separated. */
    public static final String RULES_PARAM = FilterInitParams.RULES;
    /** Init-param: {@code true} answers {@code 401} to requests without an actor; default {@code false}. */
    public static final String REQUIRE_ACTOR_PARAM = FilterInitParams.REQUIRE_ACTOR;
    /** Init-param: bytes of a mutation's response held in memory, at most (default 1 MiB); the rest waits on disk. */
    public static final String MUTATION_BUFFER_LIMIT_PARAM = FilterInitParams.MUTATION_BUFFER_LIMIT;
    /** Init-param: name of the consistency cookie, which switches it on; default off. */
    public static final String CONSISTENCY_COOKIE_PARAM = FilterInitParams.CONSISTENCY_COOKIE;
    /** Init-param: the consistency cookie's {@code Max-Age} in whole seconds, 1 to 86400; default 60. */
    public static final String CONSISTENCY_COOKIE_MAX_AGE_PARAM = FilterInitParams.CONSISTENCY_COOKIE_MAX_AGE;
    /** Init-param: {@code true} marks the consistency cookie {@code Secure} always, not only on secure requests. */
    public static final String CONSISTENCY_COOKIE_SECURE_PARAM = FilterInitParams.CONSISTENCY_COOKIE_SECURE;

    /** Request header with a position reads must reflect; response header with a mutation's commit position. */
    public static final String CONSISTENCY_TOKEN_HEADER = RoutingHeaders.CONSISTENCY_TOKEN;
    /** Request header: {@code true} reads from the primary. */
    public static final String FORCE_PRIMARY_HEADER = RoutingHeaders.FORCE_PRIMARY;
    /** Request header: {@code strong} reads from the primary. */
    public static final String CONSISTENCY_HEADER = RoutingHeaders.CONSISTENCY;
    /** Request and response header with the request id. */
    public static final String REQUEST_ID_HEADER = RoutingHeaders.REQUEST_ID;
    /** The SLF4J MDC key of the request id. */
    public static final String MDC_REQUEST_ID = "requestId";

    private static final Logger LOG = LoggerFactory.getLogger(ReadYourWritesFilter.class);
    /** Marks a request the filter already handles, so that a second mapping or a forward does not route it twice. */
    private static final String APPLIED = ReadYourWritesFilter.class.getName() + ".applied";

    private volatile EntityManagerFactory entityManagerFactory;
    private volatile ActorResolver actorResolver;
    private volatile EndpointRules rules;
    private volatile Boolean requireActor;
    private volatile int mutationBufferLimit = BufferedResponse.DEFAULT_MEMORY_LIMIT;
    private volatile ConsistencyCookie cookie;

    /** For {@code web.xml} and the web fragment: the persistence unit comes from {@value #ENTITY_MANAGER_FACTORY}. */
    public ReadYourWritesFilter() {}

    /** For programmatic registration ({@code ServletContext.addFilter}) with the given persistence unit. */
    public ReadYourWritesFilter(EntityManagerFactory entityManagerFactory) {
        this.entityManagerFactory = Objects.requireNonNull(entityManagerFactory, "entityManagerFactory");
    }

    /**
     * Sets how the actor of a request is found, instead of the init-param; default
     * {@link ActorResolver#userPrincipal()}. Call before the filter is initialised.
     */
    public ReadYourWritesFilter actorResolver(ActorResolver resolver) {
        this.actorResolver = Objects.requireNonNull(resolver, "resolver");
        return this;
    }

    /**
     * Sets the endpoint rules, instead of the init-param.
     *
     * @throws IllegalArgumentException naming the bad rule and the expected form
     */
    public ReadYourWritesFilter rules(String rules) {
        this.rules = EndpointRules.parse(rules);
        return this;
    }

    /** Whether a request without an actor is answered with {@code 401}, instead of the init-param; default {@code false}. */
    public ReadYourWritesFilter requireActor(boolean requireActor) {
        this.requireActor = requireActor;
        return this;
    }

    /**
     * Reads the init-params and finds the persistence unit.
     *
     * @throws ServletException naming the init-param or attribute that is wrong or missing, and the fix
     */
    @Override
    public void init(FilterConfig config) throws ServletException {
        final FilterInitParams params = new FilterInitParams(config, getClass().getName());
        actorResolver = params.actorResolver(actorResolver);
        rules = params.rules(rules);
        requireActor = params.requireActor(requireActor);
        mutationBufferLimit = params.mutationBufferLimit(mutationBufferLimit);
        cookie = params.consistencyCookie();
        entityManagerFactory = params.entityManagerFactory(entityManagerFactory, ENTITY_MANAGER_FACTORY);
        LOG.debug(
                "Filter '{}' routes requests; actor resolver {}, {} endpoint rules",
                config.getFilterName(),
                actorResolver == null
                        ? "userPrincipal"
                        : actorResolver.getClass().getName(),
                rules == null || rules.isEmpty() ? "no" : "with");
    }

    @Override
    public void doFilter(ServletRequest servletRequest, ServletResponse servletResponse, FilterChain chain)
            throws IOException, ServletException {
        if (!(servletRequest instanceof HttpServletRequest request)
                || !(servletResponse instanceof HttpServletResponse response)
                || servletRequest.getAttribute(APPLIED) != null) {
            chain.doFilter(servletRequest, servletResponse);
            return;
        }
        request.setAttribute(APPLIED, Boolean.TRUE);
        final String previousId = MDC.get(MDC_REQUEST_ID);
        final String requestId = RoutingHeaders.requestId(request.getHeader(REQUEST_ID_HEADER));
        MDC.put(MDC_REQUEST_ID, requestId);
        try {
            response.setHeader(REQUEST_ID_HEADER, requestId);
            route(request, response, chain);
        } finally {
            if (previousId == null) {
                MDC.remove(MDC_REQUEST_ID);
            } else {
                MDC.put(MDC_REQUEST_ID, previousId);
            }
        }
    }

    private void route(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        final int status = response.getStatus();
        if (status == HttpServletResponse.SC_UNAUTHORIZED || status == HttpServletResponse.SC_FORBIDDEN) {
            // The application rejected the request before us: no scope, no marker, no stamp.
            LOG.debug("Request already answered {}: not routed", status);
            chain.doFilter(request, response);
            return;
        }
        final String method = request.getMethod();
        final boolean mutation = !EndpointRules.SAFE_METHODS.contains(method);
        final RequestedFreshness asked;
        try {
            asked = RequestedFreshness.of(request, cookie);
        } catch (InvalidHeaderException e) {
            LOG.debug("Invalid {} header: 400", e.header());
            if (ConsistencyCookie.HEADER.equals(e.header())) {
                // Else the client, a browser that sends the cookie by itself, would get nothing but 400s.
                cookie.clear(request, response);
            }
            answer(response, HttpServletResponse.SC_BAD_REQUEST, e.getMessage());
            return;
        }
        final Actor actor = (actorResolver == null ? ActorResolver.userPrincipal() : actorResolver).resolve(request);
        if (actor == null && Boolean.TRUE.equals(requireActor)) {
            answer(
                    response,
                    HttpServletResponse.SC_UNAUTHORIZED,
                    "Authentication required: this request has no authenticated user.");
            return;
        }
        if (!primaryReached(request, response, asked)) {
            return;
        }
        final RequestRouting routing = decide(request, method, mutation, asked.forcePrimary(), asked.strong());
        final RoutingScope outer = RoutingScope.current();
        final RoutingScope scope = RoutingScope.builder()
                .strategy(routing.strategy())
                // What the client asked for is a floor: no query hint, EntityManager property or
                // annotation of the application may weaken it.
                .floor(asked.forcePrimary() || asked.strong() ? Strategy.PRIMARY : null)
                .floor(asked.token())
                .actor(actor == null ? null : actor.key())
                .minimum(actor == null ? null : actor.stamp())
                .open();
        try {
            if (mutation && actor != null) {
                // Inside the request's scope, so the library knows the marker is stored and its
                // first write does not store it again.
                try {
                    ReadYourWrites.beforeMutation(entityManagerFactory(), actor.key());
                } catch (ConsistencyMarkerException e) {
                    markerUnavailable(response, e);
                    return;
                }
            }
            request.setAttribute(RequestRouting.ATTRIBUTE, routing);
            LOG.debug(
                    "{} routed {} ({}){}",
                    method,
                    routing.strategy(),
                    routing.cause(),
                    actor == null ? " without an actor" : "");
            if (mutation) {
                mutate(request, response, chain, scope);
            } else {
                chain.doFilter(request, response);
            }
        } finally {
            closeScopes(outer, scope);
        }
    }

    /** Whether the primary has reached the client's token (or there is none); else answers 400, or 503 if unknown. */
    private boolean primaryReached(HttpServletRequest request, HttpServletResponse response, RequestedFreshness asked)
            throws IOException {
        try {
            ReadYourWrites.checkToken(entityManagerFactory(), asked.token());
            return true;
        } catch (InvalidConsistencyTokenException e) {
            LOG.debug("Consistency token ahead of the primary: 400");
            if (asked.tokenFromCookie()) {
                // After a failover to a primary behind the cookie, the client's next request goes through.
                cookie.clear(request, response);
            }
            answer(
                    response,
                    HttpServletResponse.SC_BAD_REQUEST,
                    asked.refusedToken(cookie, e.reason()).getMessage());
        } catch (JDBCException e) {
            LOG.warn("Could not check a {} against the primary: {}", CONSISTENCY_TOKEN_HEADER, e.getMessage());
            response.setHeader("Retry-After", "1");
            answer(
                    response,
                    HttpServletResponse.SC_SERVICE_UNAVAILABLE,
                    "Service unavailable: the " + CONSISTENCY_TOKEN_HEADER
                            + " could not be checked against the primary. Retry in a second.");
        }
        return false;
    }

    private RequestRouting decide(
            HttpServletRequest request, String method, boolean mutation, boolean forcePrimary, boolean strong) {
        if (mutation) {
            return new RequestRouting(Strategy.PRIMARY, true, "mutation");
        }
        if (forcePrimary) {
            return new RequestRouting(Strategy.PRIMARY, true, FORCE_PRIMARY_HEADER);
        }
        if (strong) {
            return new RequestRouting(Strategy.PRIMARY, true, CONSISTENCY_HEADER);
        }
        if (RoutingHeaders.isSubscription(request.getHeaders("Accept"), request.getHeaders("Upgrade"))) {
            return new RequestRouting(Strategy.PRIMARY, true, "subscription");
        }
        final EndpointRules endpointRules = rules;
        final Strategy ruled = endpointRules == null ? null : endpointRules.match(method, pathInApplication(request));
        return ruled != null
                ? new RequestRouting(ruled, false, "rule")
                : new RequestRouting(Strategy.READ_AFTER_WRITE, false, "safe method");
    }

    private static String pathInApplication(HttpServletRequest request) {
        final String servletPath = request.getServletPath();
        final String pathInfo = request.getPathInfo();
        final String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
        return path.isEmpty() ? "/" : path;
    }

    /** Runs a mutation's handler with its response held back until the stamp advanced, then adds the token. */
    private void mutate(HttpServletRequest request, HttpServletResponse response, FilterChain chain, RoutingScope scope)
            throws IOException, ServletException {
        final BufferedResponse buffered = new BufferedResponse(response, mutationBufferLimit);
        try {
            chain.doFilter(request, buffered);
        } catch (IOException | ServletException | RuntimeException e) {
            // The body is never released; its temporary file (a body over the memory limit) goes now.
            buffered.discard();
            ReadYourWrites.mutationEnded(entityManagerFactory());
            // The library refuses a write whose marker it could not store (Redis went away after our own marker).
            final Throwable refused = cause(e, ConsistencyMarkerException.class);
            if (refused != null && !response.isCommitted()) {
                response.reset();
                response.setHeader(REQUEST_ID_HEADER, MDC.get(MDC_REQUEST_ID));
                markerUnavailable(response, (ConsistencyMarkerException) refused);
                return;
            }
            addToken(request, response, scope);
            throw e;
        }
        // The library advanced the actor's stamp when the handler's transaction committed; only now may the client see
        // the answer. A mutation that committed nothing ends its pending marker first.
        ReadYourWrites.mutationEnded(entityManagerFactory());
        addToken(request, response, scope);
        if (request.isAsyncStarted()) {
            LOG.debug(
                    "Asynchronous mutation: its response is released when the handler returns, later writes pass through");
        }
        buffered.release();
    }

    private void addToken(HttpServletRequest request, HttpServletResponse response, RoutingScope scope) {
        final ConsistencyToken commit = scope.lastCommit();
        if (commit != null && !response.isCommitted()) {
            response.setHeader(CONSISTENCY_TOKEN_HEADER, commit.toString());
            if (cookie != null) {
                cookie.set(request, response, commit);
            }
        }
    }

    /** Closes the request's scope and any scope the handler left open on top of it, innermost first. */
    private static void closeScopes(RoutingScope outer, RoutingScope scope) {
        for (RoutingScope current = RoutingScope.current();
                current != null && current != outer;
                current = RoutingScope.current()) {
            if (current != scope) {
                // An exception no mapper handled skips Jakarta REST response filters; the scope must not outlive the
                // request.
                LOG.warn("Closing a RoutingScope that the request's handler left open");
            }
            current.close();
        }
    }

    private static void markerUnavailable(HttpServletResponse response, ConsistencyMarkerException e)
            throws IOException {
        // The message names the Redis endpoint (masked); the client only learns the cause.
        LOG.warn("Mutation refused with 503 before its handler ran: {}", e.getMessage());
        response.setHeader("Retry-After", "1");
        answer(
                response,
                HttpServletResponse.SC_SERVICE_UNAVAILABLE,
                "Service unavailable: the consistency marker (Redis) could not "
                        + "be stored, so this write was refused before it ran and nothing was written. Retry in a second.");
    }

    private static void answer(HttpServletResponse response, int status, String message) throws IOException {
        response.setStatus(status);
        response.setContentType("text/plain;charset=UTF-8");
        response.setHeader("Cache-Control", "no-store");
        final byte[] body = (message + "\n").getBytes(StandardCharsets.UTF_8);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    private EntityManagerFactory entityManagerFactory() {
        final EntityManagerFactory emf = entityManagerFactory;
        if (emf == null) {
            throw new IllegalStateException("ReadYourWritesFilter was not initialised: no EntityManagerFactory");
        }
        return emf;
    }

    private static Throwable cause(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return t;
            }
        }
        return null;
    }
}
