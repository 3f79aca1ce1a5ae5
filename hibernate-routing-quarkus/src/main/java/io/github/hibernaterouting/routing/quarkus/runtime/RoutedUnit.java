package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.internal.bootstrap.RoutingConnectionProvider;

/** The routed persistence unit's connection provider; the extension routes the default persistence unit only. */
final class RoutedUnit {
    private static volatile RoutingConnectionProvider provider;

    private RoutedUnit() {}

    static void provider(RoutingConnectionProvider routing) {
        provider = routing;
    }

    /** The provider, or {@code null} while routing is off. */
    static RoutingConnectionProvider provider() {
        return provider;
    }
}
