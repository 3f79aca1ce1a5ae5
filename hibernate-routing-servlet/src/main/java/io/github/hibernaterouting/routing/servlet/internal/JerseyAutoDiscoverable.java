package io.github.hibernaterouting.routing.servlet.internal;

import io.github.hibernaterouting.routing.servlet.RoutingStrategyFeature;
import jakarta.annotation.Priority;
import jakarta.ws.rs.core.FeatureContext;
import org.glassfish.jersey.internal.spi.AutoDiscoverable;

/**
 * Registers {@link RoutingStrategyFeature} in every Jersey application, so that
 * {@code @RoutingStrategy} works without user code; found by Jersey through
 * {@code META-INF/services}. Switched off with Jersey's own
 * {@code jersey.config.disableAutoDiscovery}.
 */
@Priority(AutoDiscoverable.DEFAULT_PRIORITY)
public final class JerseyAutoDiscoverable implements AutoDiscoverable {
    @Override
    public void configure(FeatureContext context) {
        if (!context.getConfiguration().isRegistered(RoutingStrategyFeature.class)) {
            context.register(RoutingStrategyFeature.class);
        }
    }
}
