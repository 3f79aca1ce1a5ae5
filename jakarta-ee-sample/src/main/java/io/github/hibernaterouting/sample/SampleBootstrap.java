package io.github.hibernaterouting.sample;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.StampedWork;
import io.github.hibernaterouting.routing.servlet.ReadYourWritesFilter;
import io.github.hibernaterouting.sample.domain.ResourceLocalUnitOfWork;
import io.github.hibernaterouting.sample.domain.UnitOfWork;
import io.github.hibernaterouting.sample.web.NoteEvents;
import io.github.hibernaterouting.sample.worker.WordCountWorker;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Persistence;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts and stops what the web application shares: the persistence unit {@code sample}, the
 * Prometheus registry, the background worker and the event streams. Registered in {@code web.xml},
 * so the WAR and the embedded launcher start the same way.
 *
 * <p>The persistence unit goes into the servlet context attribute
 * {@link ReadYourWritesFilter#ENTITY_MANAGER_FACTORY}, where the routing filter finds it. The
 * servers come from the context attribute {@link Servers#ATTRIBUTE} (the embedded launcher) or from
 * the environment ({@link Servers#fromEnvironment}).
 */
public class SampleBootstrap implements ServletContextListener {
    /**
     * Servlet context attribute with more persistence-unit settings (a {@code Map<String, String>}, e.g.
     * {@code hibernate.routing.primary.maximum_pool_size}), which win over {@code persistence.xml}; set by
     * {@link SampleServer#start(Servers, int, Map)}. In a servlet container, or in the launcher's JVM, pass
     * settings as system properties instead ({@code -Dhibernate.routing.primary.maximum_pool_size=5}), which
     * Hibernate reads too.
     */
    public static final String SETTINGS_ATTRIBUTE = SampleBootstrap.class.getName() + ".settings";

    /** Context init-param (and, upper-cased, environment variable {@code SAMPLE_WORKER_WHEN_BEHIND}): {@code RETRY} or {@code PRIMARY}. */
    public static final String WORKER_WHEN_BEHIND = "sample.worker.whenBehind";

    private static final Logger LOG = LoggerFactory.getLogger(SampleBootstrap.class);
    private static final String REGISTRY = PrometheusMeterRegistry.class.getName();
    private static final String WORKER = WordCountWorker.class.getName();
    private static final String UNIT_OF_WORK = UnitOfWork.class.getName();
    private static final String EVENTS = NoteEvents.class.getName();
    private static final String NODE_NAMES = NodeNames.class.getName();

    @Override
    public void contextInitialized(ServletContextEvent event) {
        final ServletContext context = event.getServletContext();
        Servers servers = (Servers) context.getAttribute(Servers.ATTRIBUTE);
        if (servers == null) {
            servers = Servers.fromEnvironment(System.getenv());
        }
        if (servers == null) {
            throw new IllegalStateException(
                    "No database: set " + Servers.PRIMARY_URL_ENV + ", " + Servers.USER_ENV + ", "
                            + Servers.PASSWORD_ENV + " and " + Servers.REPLICA_URLS_ENV + " (see the sample's README), "
                            + "or start the sample with its main class, which starts a primary and two replicas itself");
        }
        LOG.info("Sample servers: {}", servers);
        Schema.apply(servers);

        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        final Map<String, Object> properties = persistenceProperties(servers, registry);
        if (context.getAttribute(SETTINGS_ATTRIBUTE) instanceof Map<?, ?> settings) {
            settings.forEach((key, value) -> properties.put(String.valueOf(key), value));
        }
        final EntityManagerFactory emf = Persistence.createEntityManagerFactory("sample", properties);
        start(context, emf, new ResourceLocalUnitOfWork(emf), Thread::new, servers.nodeNames(), registry);
    }

    /**
     * Starts what the application shares on top of a persistence unit, whoever built it, and puts it
     * into the servlet context: the event streams, the worker, and the context attributes the routing
     * filter, the resources and the servlets read.
     *
     * @param emf the persistence unit (the routing filter's and the worker's)
     * @param unitOfWork where the resources, the authentication filter and the worker get their EntityManager
     * @param threads makes the worker's thread
     * @param nodeNames the port→name map behind {@code X-Served-By}
     * @param registry the registry behind {@code /metrics}
     */
    public static void start(
            ServletContext context,
            EntityManagerFactory emf,
            UnitOfWork unitOfWork,
            ThreadFactory threads,
            NodeNames nodeNames,
            PrometheusMeterRegistry registry) {
        final NoteEvents events = new NoteEvents();
        final WordCountWorker worker = new WordCountWorker(
                emf,
                unitOfWork,
                threads,
                nodeNames,
                whenBehind(context),
                (message, count) -> events.publish(
                        message.ownerId(),
                        "note-counted",
                        Map.of(
                                "noteId", count.getNoteId(),
                                "words", count.getWords(),
                                "readFrom", count.getReadFrom(),
                                "deliveries", count.getAttempts())));

        context.setAttribute(ReadYourWritesFilter.ENTITY_MANAGER_FACTORY, emf);
        context.setAttribute(UNIT_OF_WORK, unitOfWork);
        context.setAttribute(REGISTRY, registry);
        context.setAttribute(WORKER, worker);
        context.setAttribute(EVENTS, events);
        context.setAttribute(NODE_NAMES, nodeNames);
    }

    /**
     * What {@code persistence.xml} cannot hold: the servers, which differ per deployment, and the
     * meter registry, which is an object. Everything else is in {@code persistence.xml}.
     */
    private static Map<String, Object> persistenceProperties(Servers servers, PrometheusMeterRegistry registry) {
        final Map<String, Object> properties = new HashMap<>();
        properties.put("jakarta.persistence.jdbc.url", servers.primaryUrl());
        properties.put("jakarta.persistence.jdbc.user", servers.user());
        properties.put("jakarta.persistence.jdbc.password", servers.password());
        if (!servers.replicaUrls().isEmpty()) {
            properties.put(RoutingSettings.REPLICA_URLS, String.join(",", servers.replicaUrls()));
        }
        if (servers.redisUri() != null) {
            properties.put(RoutingSettings.REDIS_URI, servers.redisUri());
        }
        properties.put(RoutingSettings.METER_REGISTRY, registry);
        return properties;
    }

    static StampedWork.WhenBehind whenBehind(ServletContext context) {
        String value = System.getenv("SAMPLE_WORKER_WHEN_BEHIND");
        if (value == null || value.isBlank()) {
            value = context.getInitParameter(WORKER_WHEN_BEHIND);
        }
        if (value == null || value.isBlank()) {
            return StampedWork.WhenBehind.RETRY;
        }
        try {
            return StampedWork.WhenBehind.valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(WORKER_WHEN_BEHIND + " must be RETRY or PRIMARY, not '" + value + "'", e);
        }
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        stop(event.getServletContext(), true);
    }

    /**
     * Stops what {@link #start} started, in reverse order.
     *
     * @param closeEntityManagerFactory whether to close the persistence unit too: not one the container manages
     */
    public static void stop(ServletContext context, boolean closeEntityManagerFactory) {
        // Nothing may use the persistence unit once it is closed.
        close(context, WORKER);
        close(context, EVENTS);
        context.removeAttribute(UNIT_OF_WORK);
        if (closeEntityManagerFactory) {
            close(context, ReadYourWritesFilter.ENTITY_MANAGER_FACTORY);
        } else {
            context.removeAttribute(ReadYourWritesFilter.ENTITY_MANAGER_FACTORY);
        }
        close(context, REGISTRY);
    }

    private static void close(ServletContext context, String attribute) {
        final Object value = context.getAttribute(attribute);
        context.removeAttribute(attribute);
        try {
            if (value instanceof AutoCloseable closeable) {
                closeable.close();
            } else if (value instanceof MeterRegistry registry) {
                registry.close();
            }
        } catch (Exception e) {
            LOG.warn("Could not close {}", attribute, e);
        }
    }

    /** The persistence unit. */
    public static EntityManagerFactory entityManagerFactory(ServletContext context) {
        return required(context, ReadYourWritesFilter.ENTITY_MANAGER_FACTORY, EntityManagerFactory.class);
    }

    /** Where the request's EntityManager and transaction come from. */
    public static UnitOfWork unitOfWork(ServletContext context) {
        return required(context, UNIT_OF_WORK, UnitOfWork.class);
    }

    /** The registry behind {@code /metrics}. */
    public static PrometheusMeterRegistry meterRegistry(ServletContext context) {
        return required(context, REGISTRY, PrometheusMeterRegistry.class);
    }

    /** The background worker. */
    public static WordCountWorker worker(ServletContext context) {
        return required(context, WORKER, WordCountWorker.class);
    }

    /** The open event streams. */
    public static NoteEvents events(ServletContext context) {
        return required(context, EVENTS, NoteEvents.class);
    }

    /** The port→name map behind {@code X-Served-By}. */
    public static NodeNames nodeNames(ServletContext context) {
        return required(context, NODE_NAMES, NodeNames.class);
    }

    private static <T> T required(ServletContext context, String attribute, Class<T> type) {
        final Object value = context.getAttribute(attribute);
        if (value == null) {
            throw new IllegalStateException("Servlet context attribute '" + attribute + "' is not set: "
                    + SampleBootstrap.class.getName() + " must be registered as a listener in web.xml");
        }
        return type.cast(value);
    }
}
