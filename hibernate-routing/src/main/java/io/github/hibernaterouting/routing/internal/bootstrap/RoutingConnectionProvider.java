package io.github.hibernaterouting.routing.internal.bootstrap;

import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.internal.jdbc.JdbcRouting;
import io.github.hibernaterouting.routing.internal.jdbc.JtaTransactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import javax.sql.DataSource;
import org.hibernate.boot.registry.classloading.spi.ClassLoaderService;
import org.hibernate.context.spi.CurrentTenantIdentifierResolver;
import org.hibernate.engine.jdbc.connections.spi.MultiTenantConnectionProvider;
import org.hibernate.engine.jndi.spi.JndiService;
import org.hibernate.engine.transaction.jta.platform.internal.NoJtaPlatform;
import org.hibernate.engine.transaction.jta.platform.spi.JtaPlatform;
import org.hibernate.event.monitor.spi.EventMonitor;
import org.hibernate.service.UnknownUnwrapTypeException;
import org.hibernate.service.spi.Configurable;
import org.hibernate.service.spi.ServiceRegistryAwareService;
import org.hibernate.service.spi.ServiceRegistryImplementor;
import org.hibernate.service.spi.Startable;
import org.hibernate.service.spi.Stoppable;

/**
 * Hibernate's {@link MultiTenantConnectionProvider} for the connection identifiers
 * {@value Routing#PRIMARY} and {@value Routing#REPLICA}.
 *
 * <p>Registered by {@link RoutingServiceContributor} when {@code hibernate.routing.replica_urls} is
 * set; it can also be named in {@code hibernate.multi_tenant_connection_provider}. Each call of
 * {@link #getConnection} returns a new {@link RoutingConnection} that binds pooled physical
 * connections statement by statement ({@link SessionBinding} ties it to its session). It also handles Hibernate's read-only sessions
 * ({@code withOptions().readOnly(true)}), which always prefer a replica.
 */
public final class RoutingConnectionProvider
        implements MultiTenantConnectionProvider<String>,
                ServiceRegistryAwareService,
                Configurable,
                Startable,
                Stoppable {
    private static final long serialVersionUID = 1L;

    private transient RoutingConfig config;
    private transient ServiceRegistryImplementor serviceRegistry;
    private transient RoutingRuntime runtime;

    /** For Hibernate, when the class is named in the settings. */
    public RoutingConnectionProvider() {}

    RoutingConnectionProvider(RoutingConfig config) {
        this.config = config;
    }

    @Override
    public void injectServices(ServiceRegistryImplementor serviceRegistry) {
        this.serviceRegistry = serviceRegistry;
    }

    @Override
    public void configure(Map<String, Object> settings) {
        if (config == null) {
            config = RoutingConfig.from(settings, System::getenv);
        }
    }

    @Override
    public void start() {
        requireOurEventMonitor();
        runtime = RoutingRuntime.start(config, this::lookUp, config.jta ? jtaTransactions() : null);
    }

    /** Looks a data source up by its JNDI name, through Hibernate's JNDI service (settings {@code hibernate.jndi.*}). */
    private Object lookUp(String name) {
        if (serviceRegistry == null) {
            throw new IllegalStateException("no JNDI service (Hibernate's service registry is not available)");
        }
        return serviceRegistry.requireService(JndiService.class).locate(name);
    }

    /** The JTA transactions of the persistence unit, through Hibernate's JTA platform. */
    private JtaTransactions jtaTransactions() {
        final JtaPlatform platform = serviceRegistry == null ? null : serviceRegistry.getService(JtaPlatform.class);
        if (platform == null || platform instanceof NoJtaPlatform) {
            throw RoutingConfigurationException.withMessage(
                    "hibernate.transaction.jta.platform",
                    "The persistence unit uses JTA transactions but Hibernate found no JTA platform, so the library "
                            + "cannot learn when a transaction commits: set 'hibernate.transaction.jta.platform' to your "
                            + "transaction manager's platform (an application server sets it by itself)");
        }
        return new JtaTransactions(platform);
    }

    private void requireOurEventMonitor() {
        if (serviceRegistry == null) {
            return;
        }
        for (EventMonitor monitor :
                serviceRegistry.requireService(ClassLoaderService.class).loadJavaServices(EventMonitor.class)) {
            if (!(monitor instanceof RoutingEventMonitor)) {
                throw RoutingConfigurationException.withMessage(
                        "hibernate.multi_tenant_connection_provider",
                        "hibernate-routing needs its own org.hibernate.event.monitor.spi.EventMonitor to learn which session "
                                + "uses which connection, but Hibernate will use "
                                + monitor.getClass().getName()
                                + ", found first on the class path. Put hibernate-routing before that jar on the class path; "
                                + "its monitor passes every event on to the other one");
            }
            return;
        }
    }

    @Override
    public void stop() {
        if (runtime != null) {
            runtime.close();
            runtime = null;
        }
    }

    /**
     * The resolver of the connection identifier a new session starts on, with the persistence unit's default
     * strategy; for integrations that ask their own resolver (Quarkus). Available once configured.
     */
    public CurrentTenantIdentifierResolver<String> tenantResolver() {
        if (config == null) {
            throw new IllegalStateException("hibernate-routing is not configured yet");
        }
        return new RoutingTenantResolver(config.strategy);
    }

    /** The running routing state; {@code null} before start and after stop. */
    public RoutingRuntime runtime() {
        return runtime;
    }

    @Override
    public Connection getAnyConnection() throws SQLException {
        // Schema tools, metadata: always the primary.
        return requireRuntime().primaryPool().getConnection();
    }

    @Override
    public void releaseAnyConnection(Connection connection) throws SQLException {
        connection.close();
    }

    @Override
    public Connection getConnection(String tenantIdentifier) throws SQLException {
        final JdbcRouting jdbc = requireRuntime().jdbc();
        return SessionBinding.bind(jdbc.connection(isPrimary(tenantIdentifier), false), jdbc);
    }

    @Override
    public Connection getReadOnlyConnection(String tenantIdentifier) throws SQLException {
        final JdbcRouting jdbc = requireRuntime().jdbc();
        return SessionBinding.bind(jdbc.connection(isPrimary(tenantIdentifier), true), jdbc);
    }

    @Override
    public void releaseConnection(String tenantIdentifier, Connection connection) throws SQLException {
        connection.close();
    }

    @Override
    public void releaseReadOnlyConnection(String tenantIdentifier, Connection connection) throws SQLException {
        connection.close();
    }

    private static boolean isPrimary(String tenantIdentifier) {
        if (Routing.PRIMARY.equals(tenantIdentifier)) {
            return true;
        }
        if (Routing.REPLICA.equals(tenantIdentifier)) {
            return false;
        }
        throw new IllegalArgumentException(
                "Unknown connection identifier '" + tenantIdentifier + "': hibernate-routing serves '" + Routing.PRIMARY
                        + "' and '" + Routing.REPLICA + "' (see io.github.hibernaterouting.routing.Routing)");
    }

    @Override
    public boolean supportsAggressiveRelease() {
        // A routed connection carries transaction state across statements; release it after the transaction.
        return false;
    }

    @Override
    public boolean handlesConnectionReadOnly() {
        return true;
    }

    private RoutingRuntime requireRuntime() {
        final RoutingRuntime current = runtime;
        if (current == null) {
            throw new IllegalStateException(
                    "hibernate-routing is not running (the session factory is closed or not yet started)");
        }
        return current;
    }

    @Override
    public boolean isUnwrappableAs(Class<?> unwrapType) {
        return unwrapType.isInstance(this) || unwrapType == RoutingRuntime.class || unwrapType == DataSource.class;
    }

    @Override
    public <T> T unwrap(Class<T> unwrapType) {
        if (unwrapType.isInstance(this)) {
            return unwrapType.cast(this);
        }
        if (unwrapType == RoutingRuntime.class) {
            return unwrapType.cast(requireRuntime());
        }
        if (unwrapType == DataSource.class) {
            return unwrapType.cast(requireRuntime().primaryPool());
        }
        throw new UnknownUnwrapTypeException(unwrapType);
    }
}
