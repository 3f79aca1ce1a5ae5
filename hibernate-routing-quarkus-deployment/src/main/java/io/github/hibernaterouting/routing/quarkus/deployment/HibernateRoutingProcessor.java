package io.github.hibernaterouting.routing.quarkus.deployment;

import io.github.hibernaterouting.routing.quarkus.runtime.HibernateRoutingRecorder;
import io.github.hibernaterouting.routing.quarkus.runtime.QuarkusTenantResolver;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.FeatureBuildItem;
import io.quarkus.hibernate.orm.deployment.PersistenceUnitDescriptorBuildItem;
import io.quarkus.hibernate.orm.deployment.integration.HibernateOrmIntegrationRuntimeConfiguredBuildItem;
import io.quarkus.hibernate.orm.runtime.PersistenceUnitUtil;
import java.util.List;
import org.jboss.logging.Logger;

/** The build steps of the extension. */
class HibernateRoutingProcessor {
    static final String FEATURE = "hibernate-routing";
    private static final Logger LOG = Logger.getLogger(HibernateRoutingProcessor.class);

    @BuildStep
    FeatureBuildItem feature() {
        return new FeatureBuildItem(FEATURE);
    }

    @BuildStep
    AdditionalBeanBuildItem beans() {
        return AdditionalBeanBuildItem.builder()
                .addBeanClasses(QuarkusTenantResolver.class)
                .setUnremovable()
                .build();
    }

    /** Routes the default persistence unit; another one runs as without the extension. */
    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    void integrate(
            HibernateRoutingRecorder recorder,
            List<PersistenceUnitDescriptorBuildItem> units,
            BuildProducer<HibernateOrmIntegrationRuntimeConfiguredBuildItem> integrations) {
        for (PersistenceUnitDescriptorBuildItem unit : units) {
            final String name = unit.getPersistenceUnitName();
            if (!PersistenceUnitUtil.isDefaultPersistenceUnit(name)) {
                LOG.warnf(
                        "hibernate-routing routes the default persistence unit only: persistence unit '%s' runs on its"
                                + " datasource alone",
                        name);
                continue;
            }
            if (unit.isReactive()) {
                continue;
            }
            integrations.produce(new HibernateOrmIntegrationRuntimeConfiguredBuildItem(FEATURE, name)
                    .setInitListener(recorder.createRuntimeInitListener(name)));
        }
    }
}
