package io.github.hibernaterouting.routing.quarkus.deployment;

import io.github.hibernaterouting.routing.quarkus.ReadOnly;
import io.github.hibernaterouting.routing.quarkus.runtime.HibernateRoutingRecorder;
import io.github.hibernaterouting.routing.quarkus.runtime.QuarkusTenantResolver;
import io.github.hibernaterouting.routing.quarkus.runtime.ReadOnlyInterceptor;
import io.github.hibernaterouting.routing.quarkus.runtime.RoutedResource;
import io.github.hibernaterouting.routing.quarkus.runtime.RoutedResourceInterceptor;
import io.github.hibernaterouting.routing.quarkus.runtime.RoutingReadinessCheck;
import io.github.hibernaterouting.routing.quarkus.runtime.RoutingRestFilters;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.AnnotationsTransformerBuildItem;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.AdditionalIndexedClassesBuildItem;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.FeatureBuildItem;
import io.quarkus.hibernate.orm.deployment.PersistenceUnitDescriptorBuildItem;
import io.quarkus.hibernate.orm.deployment.integration.HibernateOrmIntegrationRuntimeConfiguredBuildItem;
import io.quarkus.hibernate.orm.runtime.PersistenceUnitUtil;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTransformation;
import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.DotName;
import org.jboss.jandex.IndexView;
import org.jboss.logging.Logger;

/** The build steps of the extension. */
class HibernateRoutingProcessor {
    static final String FEATURE = "hibernate-routing";
    private static final Logger LOG = Logger.getLogger(HibernateRoutingProcessor.class);
    private static final DotName PATH = DotName.createSimple("jakarta.ws.rs.Path");

    @BuildStep
    FeatureBuildItem feature() {
        return new FeatureBuildItem(FEATURE);
    }

    @BuildStep
    void beans(Capabilities capabilities, BuildProducer<AdditionalBeanBuildItem> beans) {
        beans.produce(AdditionalBeanBuildItem.builder()
                .addBeanClasses(
                        QuarkusTenantResolver.class, ReadOnly.class, ReadOnlyInterceptor.class, RoutedResource.class)
                .setUnremovable()
                .build());
        if (capabilities.isPresent(Capability.SMALLRYE_HEALTH)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(RoutingReadinessCheck.class));
        }
    }

    /**
     * The read-your-writes filter of Quarkus REST, and its interceptor on every resource class (a class with
     * {@code @Path}), which runs the resource method in the request's routing scope.
     */
    @BuildStep
    void restFilters(Capabilities capabilities, BuildProducer<AdditionalIndexedClassesBuildItem> indexed) {
        if (capabilities.isPresent(Capability.REST)) {
            indexed.produce(new AdditionalIndexedClassesBuildItem(RoutingRestFilters.class.getName()));
        }
    }

    @BuildStep
    void rest(
            Capabilities capabilities,
            CombinedIndexBuildItem index,
            BuildProducer<AdditionalBeanBuildItem> beans,
            BuildProducer<AnnotationsTransformerBuildItem> transformers) {
        if (!capabilities.isPresent(Capability.REST)) {
            return;
        }
        beans.produce(AdditionalBeanBuildItem.unremovableOf(RoutedResourceInterceptor.class));
        final Set<DotName> resources = resourceClasses(index.getIndex());
        transformers.produce(new AnnotationsTransformerBuildItem(AnnotationTransformation.forClasses()
                .whenClass(type -> resources.contains(type.name()))
                .transform(context -> context.add(RoutedResource.class))));
    }

    /**
     * The classes whose methods serve requests: with {@code @Path} on the class or a method, or implementing an
     * interface that has it.
     */
    static Set<DotName> resourceClasses(IndexView index) {
        final Set<DotName> resources = new HashSet<>();
        for (AnnotationInstance path : index.getAnnotations(PATH)) {
            final ClassInfo declaring = switch (path.target().kind()) {
                case CLASS -> path.target().asClass();
                case METHOD -> path.target().asMethod().declaringClass();
                default -> null;
            };
            if (declaring == null) {
                continue;
            }
            if (declaring.isInterface()) {
                index.getAllKnownImplementations(declaring.name()).stream()
                        .filter(type -> !type.isInterface())
                        .forEach(type -> resources.add(type.name()));
            } else {
                resources.add(declaring.name());
            }
        }
        return resources;
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
