package io.github.hibernaterouting.routing.servlet.it;

import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.servlet.ReadYourWritesFilter;
import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.NoResultException;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;
import org.slf4j.MDC;

/**
 * A small web application on an embedded Jetty: a bearer-token authentication filter, the routing
 * filter after it, a notes servlet, a server-sent-events servlet and a Jakarta REST resource.
 * Every read answer says which server port served it ({@value #SERVED_BY}).
 */
final class TestApplication implements AutoCloseable {
    static final String SERVED_BY = "X-Served-By-Port";
    static final String SCOPE = "X-Routing-Scope";
    static final String MDC_ID = "X-Mdc-Request-Id";
    /** Keys the authentication filter refuses with 401. */
    static final String REFUSED_KEY = "mallory";
    /** A key the authentication filter answers 403 for, but lets through (a lenient application). */
    static final String SUSPENDED_KEY = "suspended";

    /** The routing filter's memory limit for a held-back mutation response. */
    static final String MUTATION_BUFFER_LIMIT = "4kB";

    static volatile EntityManagerFactory emf;
    /** How often the notes servlet's POST handler ran. */
    static final AtomicInteger mutationHandlerRuns = new AtomicInteger();

    private final Server server;
    private final int port;

    TestApplication(EntityManagerFactory entityManagerFactory, String rules) throws Exception {
        this(entityManagerFactory, rules, Map.of());
    }

    /** With more init-params of the routing filter, such as the consistency cookie's. */
    TestApplication(EntityManagerFactory entityManagerFactory, String rules, Map<String, String> initParams)
            throws Exception {
        emf = entityManagerFactory;
        server = new Server();
        final ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        final ServletContextHandler context = new ServletContextHandler("/");
        context.addFilter(new FilterHolder(new BearerAuthFilter()), "/*", EnumSet.of(DispatcherType.REQUEST));
        final FilterHolder routing = new FilterHolder(new ReadYourWritesFilter(entityManagerFactory));
        routing.setInitParameter(ReadYourWritesFilter.RULES_PARAM, rules);
        // Small, so that a test's large mutation response goes beyond what the filter holds in memory.
        routing.setInitParameter(ReadYourWritesFilter.MUTATION_BUFFER_LIMIT_PARAM, MUTATION_BUFFER_LIMIT);
        initParams.forEach(routing::setInitParameter);
        routing.setAsyncSupported(true);
        context.addFilter(routing, "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new NotesServlet()), "/notes/*");
        context.addServlet(new ServletHolder(new NotesServlet()), "/reports/*");
        context.addServlet(new ServletHolder(new EventsServlet()), "/events");
        // RoutingStrategyFeature is not registered here: Jersey must find it by itself.
        context.addServlet(new ServletHolder(new ServletContainer(new ResourceConfig(NotesResource.class))), "/api/*");
        server.setHandler(context);
        server.start();
        port = connector.getLocalPort();
    }

    String url(String path) {
        return "http://127.0.0.1:" + port + path;
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }

    /** {@code Authorization: Bearer <key>} authenticates as {@code key}; anything else is a 401. */
    static final class BearerAuthFilter implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            final HttpServletRequest request = (HttpServletRequest) req;
            final HttpServletResponse response = (HttpServletResponse) res;
            final String authorization = request.getHeader("Authorization");
            if (authorization == null) {
                // Anonymous requests are allowed: they are routed by method only.
                chain.doFilter(request, response);
                return;
            }
            final String key = authorization.startsWith("Bearer ")
                    ? authorization.substring(7).trim()
                    : "";
            if (key.isEmpty() || key.equals(REFUSED_KEY)) {
                response.setStatus(HttpServletResponse.SC_UNAUTHORIZED);
                response.setHeader("WWW-Authenticate", "Bearer");
                response.getWriter().print("unauthorized");
                return;
            }
            if (key.equals(SUSPENDED_KEY)) {
                response.setStatus(HttpServletResponse.SC_FORBIDDEN);
            }
            final Principal principal = () -> key;
            chain.doFilter(
                    new HttpServletRequestWrapper(request) {
                        @Override
                        public Principal getUserPrincipal() {
                            return principal;
                        }
                    },
                    response);
        }
    }

    static String scopeDescription() {
        final RoutingScope scope = RoutingScope.current();
        return scope == null ? "none" : scope.effectiveStrategy() + (scope.actor() == null ? "" : " " + scope.actor());
    }

    /**
     * {@code POST /notes} creates a note and answers its id; {@code GET /notes/<id>} reads it. With
     * {@code ?strategy=S&via=property} or {@code ?strategy=S&via=hint} the read runs under strategy
     * {@code S} set as an EntityManager property or as a query hint, as one native query that also
     * answers which server ran it.
     */
    static final class NotesServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
            mutationHandlerRuns.incrementAndGet();
            response.setHeader(SCOPE, scopeDescription());
            response.setStatus(HttpServletResponse.SC_CREATED);
            response.setContentType("text/plain;charset=UTF-8");
            if (request.getParameter("flushEarly") != null) {
                // Commits the response before the write: without the filter's buffering, the client would see it now.
                response.getWriter().println("creating");
                final String padding = request.getParameter("padding");
                if (padding != null) {
                    // Far more than the filter holds in memory, written before the transaction commits.
                    response.getWriter().println("x".repeat(Integer.parseInt(padding)));
                }
                response.flushBuffer();
            }
            final String text = new String(request.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            final long id;
            try (EntityManager em = emf.createEntityManager()) {
                em.getTransaction().begin();
                final WebNote note = new WebNote(text);
                em.persist(note);
                em.getTransaction().commit();
                id = note.id;
            }
            response.getWriter().print(id);
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setHeader(SCOPE, scopeDescription());
            response.setHeader(MDC_ID, String.valueOf(MDC.get(ReadYourWritesFilter.MDC_REQUEST_ID)));
            final long id = Long.parseLong(request.getPathInfo().substring(1));
            if (request.getParameter("primaryThenDefault") != null) {
                readOnPrimaryThenInAnotherEntityManager(id, response);
                return;
            }
            final String strategy = request.getParameter("strategy");
            if (strategy != null) {
                readUnder(Strategy.valueOf(strategy), request.getParameter("via"), id, response);
                return;
            }
            try (EntityManager em = emf.createEntityManager()) {
                final WebNote note = em.find(WebNote.class, id);
                response.setHeader(SERVED_BY, servedBy(em));
                response.setContentType("text/plain;charset=UTF-8");
                if (note == null) {
                    response.setStatus(HttpServletResponse.SC_NOT_FOUND);
                    return;
                }
                response.getWriter().print(note.text);
            }
        }
    }

    /**
     * Two EntityManagers in one request, as without open-session-in-view: the first reads note
     * {@code id} on the primary (query hint), the second under the default strategy. Answers both
     * texts ({@code first|second}, {@code -} for none) and which server served the second.
     */
    static void readOnPrimaryThenInAnotherEntityManager(long id, HttpServletResponse response) throws IOException {
        final String first;
        try (EntityManager em = emf.createEntityManager()) {
            first = em.createQuery("select n.text from WebNote n where n.id = :id", String.class)
                    .setParameter("id", id)
                    .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.PRIMARY))
                    .getResultStream()
                    .findFirst()
                    .orElse("-");
        }
        try (EntityManager em = emf.createEntityManager()) {
            final WebNote note = em.find(WebNote.class, id);
            response.setHeader(SERVED_BY, servedBy(em));
            response.setHeader(SCOPE, scopeDescription());
            response.setContentType("text/plain;charset=UTF-8");
            response.getWriter().print(first + "|" + (note == null ? "-" : note.text));
        }
    }

    /** Reads note {@code id} under {@code strategy} given as an EntityManager property or as a query hint. */
    static void readUnder(Strategy strategy, String via, long id, HttpServletResponse response) throws IOException {
        try (EntityManager em = emf.createEntityManager()) {
            final String sql = "select text, inet_server_port() from web_note where id = ?";
            final Object[] row;
            try {
                if ("property".equals(via)) {
                    em.setProperty(RoutingSettings.STRATEGY, strategy);
                    row = (Object[])
                            em.createNativeQuery(sql).setParameter(1, id).getSingleResult();
                } else if ("hint".equals(via)) {
                    row = (Object[]) em.createNativeQuery(sql)
                            .setParameter(1, id)
                            .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(strategy))
                            .getSingleResult();
                } else {
                    throw new IllegalArgumentException("via=" + via);
                }
            } catch (NoResultException e) {
                response.setHeader(
                        SERVED_BY,
                        String.valueOf(em.createNativeQuery("select inet_server_port()")
                                .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(strategy))
                                .getSingleResult()));
                response.setStatus(HttpServletResponse.SC_NOT_FOUND);
                return;
            }
            response.setHeader(SERVED_BY, String.valueOf(row[1]));
            response.setHeader(SCOPE, scopeDescription());
            response.setContentType("text/plain;charset=UTF-8");
            response.getWriter().print(row[0]);
        }
    }

    /** A server-sent-events stream that says which server the subscription's read ran on. */
    static final class EventsServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            try (EntityManager em = emf.createEntityManager()) {
                final String port = servedBy(em);
                response.setHeader(SERVED_BY, port);
                response.setContentType("text/event-stream");
                response.getWriter().print("data: " + port + "\n\n");
            }
        }
    }

    static String servedBy(EntityManager em) {
        return String.valueOf(em.createNativeQuery("select inet_server_port()").getSingleResult());
    }

    /** Jakarta REST reads of notes, with and without {@link RoutingStrategy}. */
    @Path("notes")
    public static class NotesResource {
        private static Response read(long id) {
            try (EntityManager em = emf.createEntityManager()) {
                final WebNote note = em.find(WebNote.class, id);
                return Response.status(note == null ? 404 : 200)
                        .entity(note == null ? "" : note.text)
                        .header(SERVED_BY, servedBy(em))
                        .header(SCOPE, scopeDescription())
                        .build();
            }
        }

        @GET
        @Path("{id}")
        public Response plain(@PathParam("id") long id) {
            return read(id);
        }

        @GET
        @Path("{id}/primary")
        @RoutingStrategy(Strategy.PRIMARY)
        public Response primary(@PathParam("id") long id) {
            return read(id);
        }

        @GET
        @Path("{id}/stale")
        @RoutingStrategy(Strategy.STALE_READ)
        public Response stale(@PathParam("id") long id) {
            return read(id);
        }

        /** A mutation that writes nothing: reads the note and answers 202. */
        @POST
        @Path("{id}/check")
        public Response check(@PathParam("id") long id) {
            try (EntityManager em = emf.createEntityManager()) {
                em.find(WebNote.class, id);
            }
            return Response.accepted().build();
        }
    }
}
