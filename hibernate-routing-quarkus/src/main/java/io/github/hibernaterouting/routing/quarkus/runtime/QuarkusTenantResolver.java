package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.internal.bootstrap.RoutingConnectionProvider;
import io.quarkus.hibernate.orm.PersistenceUnitExtension;
import io.quarkus.hibernate.orm.runtime.tenant.TenantResolver;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The connection identifier a new session starts on ({@value Routing#PRIMARY} or {@value Routing#REPLICA}), as
 * the library decides it, through Quarkus' tenant resolver: with the library's connection provider installed
 * Quarkus asks this bean, not the library's resolver.
 */
@PersistenceUnitExtension
@ApplicationScoped
public class QuarkusTenantResolver implements TenantResolver {
    @Override
    public String getDefaultTenantId() {
        return Routing.PRIMARY;
    }

    @Override
    public String resolveTenantId() {
        final RoutingConnectionProvider provider = RoutedUnit.provider();
        return provider == null ? Routing.PRIMARY : provider.tenantResolver().resolveCurrentTenantIdentifier();
    }
}
