package io.github.hibernaterouting.routing.servlet.internal;

import io.github.hibernaterouting.routing.servlet.spi.ActorResolver;
import jakarta.persistence.EntityManagerFactory;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import java.util.Collections;
import java.util.Set;

/**
 * Reads the read-your-writes filter's init-params, each set at most once (in code or as an
 * init-param), and fails its {@code init} with a message that names the init-param and the fix.
 */
public final class FilterInitParams {
    /** Class name of the {@link ActorResolver}; it needs a public no-argument constructor. */
    public static final String ACTOR_RESOLVER = "actor-resolver";
    /** Endpoint rules for safe methods, {@code [METHOD] /path/pattern=STRATEGY}, comma-separated. */
    public static final String RULES = "rules";
    /** {@code true} answers {@code 401} to requests without an actor; default {@code false}. */
    public static final String REQUIRE_ACTOR = "require-actor";

    /**
     * Bytes of a mutation's response body held in memory until the stamp advanced, at most; the rest
     * waits in a temporary file. A whole number of bytes, or with {@code kB} or {@code MB}.
     */
    public static final String MUTATION_BUFFER_LIMIT = "mutation-buffer-limit";

    /** Name of the consistency cookie, which switches it on (read-your-writes for clients without an actor); default off. */
    public static final String CONSISTENCY_COOKIE = "consistency-cookie";

    /** The consistency cookie's {@code Max-Age}, whole seconds from 1 to 86400; default 60. */
    public static final String CONSISTENCY_COOKIE_MAX_AGE = "consistency-cookie-max-age";

    /** {@code true} marks the consistency cookie {@code Secure} on every response; default {@code false}: on secure requests. */
    public static final String CONSISTENCY_COOKIE_SECURE = "consistency-cookie-secure";

    private static final Set<String> KNOWN = Set.of(
            ACTOR_RESOLVER,
            RULES,
            REQUIRE_ACTOR,
            MUTATION_BUFFER_LIMIT,
            CONSISTENCY_COOKIE,
            CONSISTENCY_COOKIE_MAX_AGE,
            CONSISTENCY_COOKIE_SECURE);

    private final FilterConfig config;

    /**
     * @throws ServletException if an init-param is unknown
     */
    public FilterInitParams(FilterConfig config, String filterClass) throws ServletException {
        this.config = config;
        for (String name : Collections.list(config.getInitParameterNames())) {
            if (!KNOWN.contains(name)) {
                throw new ServletException("Unknown init-param '" + name + "' of filter '" + config.getFilterName()
                        + "' (" + filterClass + "); the known ones are "
                        + String.join(", ", KNOWN.stream().sorted().toList()));
            }
        }
    }

    /** The actor resolver: {@code inCode} if the init-param is absent. */
    public ActorResolver actorResolver(ActorResolver inCode) throws ServletException {
        final String className = config.getInitParameter(ACTOR_RESOLVER);
        if (className == null) {
            return inCode;
        }
        if (inCode != null) {
            throw new ServletException("Filter '" + config.getFilterName()
                    + "' has an actor resolver set in code and the init-param '" + ACTOR_RESOLVER
                    + "'; keep one of them");
        }
        return instantiate(className.trim());
    }

    /** The endpoint rules: {@code inCode} if the init-param is absent. */
    public EndpointRules rules(EndpointRules inCode) throws ServletException {
        final String text = config.getInitParameter(RULES);
        if (text == null) {
            return inCode;
        }
        if (inCode != null) {
            throw new ServletException("Filter '" + config.getFilterName()
                    + "' has rules set in code and the init-param '" + RULES + "'; keep one of them");
        }
        try {
            return EndpointRules.parse(text);
        } catch (IllegalArgumentException e) {
            throw new ServletException(
                    "Init-param '" + RULES + "' of filter '" + config.getFilterName() + "': " + e.getMessage());
        }
    }

    /** Whether a request without an actor is answered with 401: {@code inCode} if the init-param is absent. */
    public Boolean requireActor(Boolean inCode) throws ServletException {
        final String text = config.getInitParameter(REQUIRE_ACTOR);
        if (text == null) {
            return inCode;
        }
        if (inCode != null) {
            throw new ServletException("Filter '" + config.getFilterName()
                    + "' has require-actor set in code and the init-param '" + REQUIRE_ACTOR + "'; keep one of them");
        }
        final String value = text.trim();
        if (!value.equals("true") && !value.equals("false")) {
            throw new ServletException("Invalid value '" + value + "' for init-param '" + REQUIRE_ACTOR
                    + "' of filter '" + config.getFilterName() + "': expected 'true' or 'false'");
        }
        return Boolean.valueOf(value);
    }

    /** The memory limit of a mutation's held-back body: {@code inCode} if the init-param is absent. */
    public int mutationBufferLimit(int inCode) throws ServletException {
        final String text = config.getInitParameter(MUTATION_BUFFER_LIMIT);
        if (text == null) {
            return inCode;
        }
        final String value = text.trim();
        final java.util.regex.Matcher matcher =
                java.util.regex.Pattern.compile("(\\d{1,10})\\s*(kB|MB)?").matcher(value);
        final long limit = matcher.matches()
                ? Long.parseLong(matcher.group(1))
                        * (matcher.group(2) == null ? 1 : matcher.group(2).equals("kB") ? 1024 : 1024 * 1024)
                : -1;
        if (limit < 0 || limit > Integer.MAX_VALUE - 8) {
            throw new ServletException("Invalid value '" + value + "' for init-param '" + MUTATION_BUFFER_LIMIT
                    + "' of filter '" + config.getFilterName()
                    + "': expected a number of bytes, such as 1048576, 512kB or 1MB (less than 2 GB)");
        }
        return (int) limit;
    }

    /**
     * The consistency cookie, or {@code null} without the init-param {@value #CONSISTENCY_COOKIE}.
     *
     * @throws ServletException for a bad name, max age or secure flag, or either of the last two without a name
     */
    public ConsistencyCookie consistencyCookie() throws ServletException {
        final String name = config.getInitParameter(CONSISTENCY_COOKIE);
        final String maxAge = config.getInitParameter(CONSISTENCY_COOKIE_MAX_AGE);
        final String secure = config.getInitParameter(CONSISTENCY_COOKIE_SECURE);
        if (name == null) {
            if (maxAge != null || secure != null) {
                throw new ServletException("Init-param '"
                        + (maxAge != null ? CONSISTENCY_COOKIE_MAX_AGE : CONSISTENCY_COOKIE_SECURE) + "' of filter '"
                        + config.getFilterName() + "' has no effect without '" + CONSISTENCY_COOKIE + "': set '"
                        + CONSISTENCY_COOKIE + "' to the cookie's name, or remove it");
            }
            return null;
        }
        if (!ConsistencyCookie.isValidName(name.trim())) {
            throw new ServletException("Invalid value '" + name.trim() + "' for init-param '" + CONSISTENCY_COOKIE
                    + "' of filter '" + config.getFilterName() + "': " + ConsistencyCookie.NAME_RULE);
        }
        final String age = maxAge == null ? String.valueOf(ConsistencyCookie.DEFAULT_MAX_AGE) : maxAge.trim();
        final int seconds = age.matches("\\d{1,5}") ? Integer.parseInt(age) : -1;
        if (seconds < 1 || seconds > ConsistencyCookie.MAX_MAX_AGE) {
            throw new ServletException("Invalid value '" + age + "' for init-param '" + CONSISTENCY_COOKIE_MAX_AGE
                    + "' of filter '" + config.getFilterName() + "': expected whole seconds from 1 to "
                    + ConsistencyCookie.MAX_MAX_AGE + ", such as " + ConsistencyCookie.DEFAULT_MAX_AGE);
        }
        final String secureValue = secure == null ? "false" : secure.trim();
        if (!secureValue.equals("true") && !secureValue.equals("false")) {
            throw new ServletException("Invalid value '" + secureValue + "' for init-param '"
                    + CONSISTENCY_COOKIE_SECURE + "' of filter '" + config.getFilterName()
                    + "': expected 'true' or 'false'");
        }
        return new ConsistencyCookie(name.trim(), seconds, Boolean.parseBoolean(secureValue));
    }

    /** The persistence unit: {@code inCode}, else the servlet context attribute {@code attribute}. */
    public EntityManagerFactory entityManagerFactory(EntityManagerFactory inCode, String attribute)
            throws ServletException {
        if (inCode != null) {
            return inCode;
        }
        final Object value = config.getServletContext().getAttribute(attribute);
        if (!(value instanceof EntityManagerFactory emf)) {
            throw new ServletException("Filter '" + config.getFilterName()
                    + "' needs the EntityManagerFactory of the "
                    + "routed persistence unit in the servlet context attribute '" + attribute + "' "
                    + (value == null
                            ? "(it is not set)"
                            : "(it holds a " + value.getClass().getName() + ")")
                    + ": set it in a ServletContextListener, or register the filter programmatically with "
                    + "new ReadYourWritesFilter(entityManagerFactory)");
        }
        return emf;
    }

    private static ActorResolver instantiate(String className) throws ServletException {
        try {
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            if (loader == null) {
                loader = FilterInitParams.class.getClassLoader();
            }
            final Class<?> type = Class.forName(className, true, loader);
            if (!ActorResolver.class.isAssignableFrom(type)) {
                throw new ServletException("Init-param '" + ACTOR_RESOLVER + "': class " + className
                        + " does not implement " + ActorResolver.class.getName());
            }
            return (ActorResolver) type.getConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new ServletException(
                    "Init-param '" + ACTOR_RESOLVER + "': cannot create " + className
                            + "; it must be a public class with a public no-argument constructor implementing "
                            + ActorResolver.class.getName() + " (" + e + ")",
                    e);
        }
    }
}
