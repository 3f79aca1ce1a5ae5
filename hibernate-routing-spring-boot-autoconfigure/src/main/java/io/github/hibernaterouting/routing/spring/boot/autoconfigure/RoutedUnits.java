package io.github.hibernaterouting.routing.spring.boot.autoconfigure;

import io.github.hibernaterouting.routing.RoutingStatus;
import jakarta.persistence.EntityManagerFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.orm.jpa.EntityManagerFactoryInfo;

/**
 * The application's persistence units, for the parts of the starter that serve one or all of them:
 * several {@link EntityManagerFactory} beans without a {@code @Primary} one are a common Spring setup,
 * and must not stop the start. The starter's settings reach every unit Spring Boot's
 * {@code EntityManagerFactoryBuilder} makes, so each of those is routed.
 */
final class RoutedUnits {
    private static final Logger LOG = LoggerFactory.getLogger(RoutedUnits.class);

    private RoutedUnits() {}

    /** The units routing is on for, by bean name, in the context's order (all of them when none is). */
    static Map<String, EntityManagerFactory> routed(ListableBeanFactory beans) {
        final Map<String, EntityManagerFactory> all = beans.getBeansOfType(EntityManagerFactory.class);
        final Map<String, EntityManagerFactory> routed = new LinkedHashMap<>();
        all.forEach((name, emf) -> {
            if (RoutingStatus.of(emf) != null) {
                routed.put(name, emf);
            }
        });
        return routed.isEmpty() ? all : routed;
    }

    /**
     * The one unit the read-your-writes filter serves: the only or {@code @Primary} one, else the first
     * routed one, said in the log with how to choose another.
     */
    static EntityManagerFactory forFilter(ObjectProvider<EntityManagerFactory> provider, ListableBeanFactory beans) {
        final EntityManagerFactory unique = provider.getIfUnique();
        if (unique != null) {
            return unique;
        }
        final Map<String, EntityManagerFactory> routed = routed(beans);
        final Map.Entry<String, EntityManagerFactory> first =
                routed.entrySet().iterator().next();
        LOG.info(
                "The read-your-writes filter serves persistence unit '{}' (bean '{}'), the first of the routed units {}:"
                        + " its actors' stamps and the tokens it sends and checks are that unit's. Mark another"
                        + " EntityManagerFactory @Primary to serve that one instead",
                unitName(first.getValue()),
                first.getKey(),
                routed.keySet());
        return first.getValue();
    }

    /** The persistence unit's name, or {@code default} when Spring does not know it. */
    static String unitName(EntityManagerFactory emf) {
        if (emf instanceof EntityManagerFactoryInfo info && info.getPersistenceUnitName() != null) {
            return info.getPersistenceUnitName();
        }
        return "default";
    }
}
