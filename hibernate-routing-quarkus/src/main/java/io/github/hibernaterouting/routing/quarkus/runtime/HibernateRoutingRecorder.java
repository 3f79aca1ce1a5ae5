package io.github.hibernaterouting.routing.quarkus.runtime;

import io.quarkus.hibernate.orm.runtime.integration.HibernateOrmIntegrationRuntimeInitListener;
import io.quarkus.runtime.RuntimeValue;
import io.quarkus.runtime.annotations.Recorder;

/** Creates, at runtime init, what puts the library into the persistence unit. */
@Recorder
public class HibernateRoutingRecorder {
    private final RuntimeValue<HibernateRoutingConfig> config;

    public HibernateRoutingRecorder(RuntimeValue<HibernateRoutingConfig> config) {
        this.config = config;
    }

    public HibernateOrmIntegrationRuntimeInitListener createRuntimeInitListener(String persistenceUnit) {
        return new RoutingRuntimeInitListener(config.getValue(), persistenceUnit);
    }
}
