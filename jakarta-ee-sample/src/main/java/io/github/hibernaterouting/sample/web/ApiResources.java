package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.routing.servlet.RoutingStrategyFeature;
import java.util.Set;

/**
 * The classes of the Jakarta REST application under {@code /api}, whichever implementation serves it
 * (Jersey on the embedded Jetty, the server's own on a Jakarta EE server).
 */
public final class ApiResources {
    /**
     * The resources and providers: {@link RoutingStrategyFeature} makes {@code @RoutingStrategy} on
     * resource methods work; {@link ApiExceptionMapper} answers every exception as the API's JSON error.
     */
    public static final Set<Class<?>> CLASSES = Set.of(
            NotesResource.class,
            RawNotesResource.class,
            MeResource.class,
            EventsResource.class,
            RoutingStrategyFeature.class,
            ApiExceptionMapper.class);

    private ApiResources() {}
}
