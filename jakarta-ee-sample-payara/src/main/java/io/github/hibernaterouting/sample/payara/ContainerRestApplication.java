package io.github.hibernaterouting.sample.payara;

import io.github.hibernaterouting.sample.web.ApiResources;
import jakarta.ws.rs.core.Application;
import java.util.Set;

/**
 * The sample's Jakarta REST application under {@code /api} (mapped in {@code web.xml}), served by
 * the server's own implementation and its JSON-B; the embedded sample serves the same classes with
 * Jersey and Jackson.
 */
public class ContainerRestApplication extends Application {
    @Override
    public Set<Class<?>> getClasses() {
        return ApiResources.CLASSES;
    }
}
