/**
 * Spring Boot auto-configuration of hibernate-routing. Applications use it through properties
 * ({@link io.github.hibernaterouting.routing.spring.boot.autoconfigure.HibernateRoutingProperties})
 * and, where they replace a part, through the types of the beans it declares:
 * {@link io.github.hibernaterouting.routing.spring.boot.autoconfigure.RoutingReplicaDataSources},
 * {@link io.github.hibernaterouting.routing.spring.boot.autoconfigure.RoutingHealthContributor},
 * {@link io.github.hibernaterouting.routing.spring.boot.autoconfigure.SecurityContextActorResolver}
 * and {@link io.github.hibernaterouting.routing.spring.boot.autoconfigure.RoutingScopeTaskDecorator}.
 * The {@code *AutoConfiguration} classes are for Spring Boot to load; the package-private classes
 * are not supported API.
 */
package io.github.hibernaterouting.routing.spring.boot.autoconfigure;
