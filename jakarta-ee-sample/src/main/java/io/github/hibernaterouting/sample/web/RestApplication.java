package io.github.hibernaterouting.sample.web;

import jakarta.ws.rs.core.Application;
import java.util.Set;
import org.glassfish.jersey.jackson.JacksonFeature;

/** The Jakarta REST application under {@code /api} (mapped in {@code web.xml}). */
public class RestApplication extends Application {
    @Override
    public Set<Class<?>> getClasses() {
        return ApiResources.CLASSES;
    }

    @Override
    public Set<Object> getSingletons() {
        // Without Jackson's own exception mappers: they answer a bad body with Jackson's message, which names
        // the sample's classes. ApiExceptionMapper answers it instead.
        return Set.of(JacksonFeature.withoutExceptionMappers());
    }
}
