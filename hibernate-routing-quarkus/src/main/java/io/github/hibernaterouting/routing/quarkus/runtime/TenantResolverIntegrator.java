package io.github.hibernaterouting.routing.quarkus.runtime;

import io.github.hibernaterouting.routing.internal.bootstrap.RoutingConnectionProvider;
import org.hibernate.boot.Metadata;
import org.hibernate.boot.internal.SessionFactoryOptionsBuilder;
import org.hibernate.boot.spi.BootstrapContext;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.integrator.spi.Integrator;
import org.jboss.logging.Logger;

/**
 * Gives the routed session factory the library's own resolver of the connection identifier. Quarkus installs a
 * resolver that answers nothing without an active CDI request context, and Hibernate then refuses to open a session
 * ("no tenant identifier specified") where Quarkus without the extension opens one: a {@code QuarkusTransaction} or
 * {@code @Transactional} method on a thread of the application's own, a {@code @Startup} bean. The library's
 * resolver needs no context. Found by Hibernate through {@code META-INF/services}.
 */
public final class TenantResolverIntegrator implements Integrator {
    private static final Logger LOG = Logger.getLogger(TenantResolverIntegrator.class);

    @Override
    public void integrate(
            Metadata metadata, BootstrapContext bootstrapContext, SessionFactoryImplementor sessionFactory) {
        final MultiTenantConnectionProvider<?> provider =
                sessionFactory.getServiceRegistry().getService(MultiTenantConnectionProvider.class);
        if (!(provider instanceof RoutingConnectionProvider routing)) {
            return;
        }
        if (sessionFactory.getSessionFactoryOptions() instanceof SessionFactoryOptionsBuilder options) {
            options.applyCurrentTenantIdentifierResolver(routing.tenantResolver());
        } else {
            LOG.warnf(
                    "hibernate-routing could not replace Quarkus' tenant resolver (session factory options of %s):"
                            + " sessions need an active CDI request context",
                    sessionFactory.getSessionFactoryOptions().getClass().getName());
        }
    }
}
