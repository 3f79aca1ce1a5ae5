package io.github.hibernaterouting.routing.internal.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.hibernate.cache.spi.DomainDataRegion;
import org.hibernate.cache.spi.QueryResultsRegion;
import org.hibernate.cache.spi.RegionFactory;
import org.hibernate.cache.spi.access.CollectionDataAccess;
import org.hibernate.cache.spi.access.EntityDataAccess;
import org.hibernate.cache.spi.access.NaturalIdDataAccess;
import org.junit.jupiter.api.Test;

/**
 * The cache wrappers pass every call of Hibernate's cache SPI to the provider (or decide it
 * themselves): a method added to the SPI in a Hibernate release must not be silently left to an
 * interface default, which would bypass the provider.
 */
class CacheWrapperContractTest {
    private static List<String> notImplemented(Class<?> wrapper, Class<?> contract) {
        final List<String> missing = new ArrayList<>();
        for (Method method : contract.getMethods()) {
            if (Modifier.isStatic(method.getModifiers())) {
                continue;
            }
            try {
                final Method implementation = wrapper.getMethod(method.getName(), method.getParameterTypes());
                if (implementation.getDeclaringClass().isInterface()
                        || Modifier.isAbstract(implementation.getModifiers())) {
                    missing.add(method.toString());
                }
            } catch (NoSuchMethodException e) {
                missing.add(method.toString());
            }
        }
        return missing;
    }

    @Test
    void everyWrapper_implementsEveryMethodOfItsContract_defaultsIncluded() {
        assertThat(notImplemented(RoutingRegionFactory.class, RegionFactory.class))
                .isEmpty();
        assertThat(notImplemented(RoutedDomainDataRegion.class, DomainDataRegion.class))
                .isEmpty();
        assertThat(notImplemented(RoutedQueryResultsRegion.class, QueryResultsRegion.class))
                .isEmpty();
        assertThat(notImplemented(RoutedEntityDataAccess.class, EntityDataAccess.class))
                .isEmpty();
        assertThat(notImplemented(RoutedCollectionDataAccess.class, CollectionDataAccess.class))
                .isEmpty();
        assertThat(notImplemented(RoutedNaturalIdDataAccess.class, NaturalIdDataAccess.class))
                .isEmpty();
    }

    @Test
    void aMethodLeftToAnInterfaceDefault_wouldBeFound() {
        abstract class Partial implements RegionFactory {
            private static final long serialVersionUID = 1L;
        }
        assertThat(notImplemented(Partial.class, RegionFactory.class))
                .anyMatch(method -> method.contains("getTimeout()"))
                .anyMatch(method -> method.contains("nextTimestamp()"));
    }
}
