package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.RoutingHealthContributor;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import io.github.hibernaterouting.testkit.TcpRelay;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The Actuator contributor of a replica whose one URL reaches both standbys (a round-robin relay, as
 * a load-balanced read endpoint is) lists each server behind it: reads are decided per server, and
 * an operator needs to see which one is behind.
 */
class HealthOfLoadBalancedReplicaIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER = PostgresClusterExtension.withStandbys(2);

    @Test
    void replicaBehindARelay_listsEachServerWithItsLag() {
        final PostgresCluster cluster = CLUSTER.cluster();
        try (TcpRelay relay = new TcpRelay(cluster.standbys(), cluster.database());
                EntityManagerFactory emf = RoutingTestSupport.emf(
                        "health-relay",
                        cluster,
                        Map.of(
                                RoutingSettings.REPLICA_URLS,
                                relay.jdbcUrl(),
                                "hibernate.cache.use_second_level_cache",
                                "false"))) {
            // Two units of work at once hold two connections, which the relay hands to the two standbys.
            try (EntityManager first = emf.createEntityManager();
                    EntityManager second = emf.createEntityManager()) {
                first.getTransaction().begin();
                second.getTransaction().begin();
                first.createNativeQuery("select 1").getSingleResult();
                second.createNativeQuery("select 1").getSingleResult();
                first.getTransaction().commit();
                second.getTransaction().commit();
            }
            final Health health =
                    ((HealthIndicator) new RoutingHealthContributor(emf, null).getContributor("replica1")).health();
            assertThat(health.getDetails().get("servers"))
                    .as("the servers behind replica1: %s", health.getDetails())
                    .isInstanceOf(List.class)
                    .asList()
                    .hasSize(2)
                    .anySatisfy(server -> assertThat(server.toString())
                            .startsWith("127.0.0.1:" + cluster.standby(1).port() + " "))
                    .anySatisfy(server -> assertThat(server.toString())
                            .startsWith("127.0.0.1:" + cluster.standby(2).port() + " "));
        }
    }
}
