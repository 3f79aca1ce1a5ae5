package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.NoteRepository;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.NoteService;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManagerFactory;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A new application: the starter, Spring Data JPA, its data source as always, and one property of the
 * starter's, the replica URLs. Nothing else of the library's is configured.
 */
class MinimalApplicationIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER = PostgresClusterExtension.withStandbys(2);

    @Test
    void replicaUrlsAlone_giveReplicaReads_andReadYourWrites_whileTheReplicasArePaused() throws Exception {
        final PostgresCluster cluster = CLUSTER.cluster();
        final Map<String, Object> properties = Map.of(
                "spring.datasource.url", cluster.primary().jdbcUrl(),
                "spring.datasource.username", cluster.user(),
                "spring.datasource.password", cluster.password(),
                "hibernate.routing.replica_urls",
                        cluster.standbys().stream().map(Node::jdbcUrl).collect(Collectors.joining(",")),
                // The application's schema, not the library's concern.
                "spring.jpa.hibernate.ddl-auto", "update");
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(TestApplication.class)
                .web(WebApplicationType.NONE)
                .properties(properties)
                .run()) {
            final NoteService service = context.getBean(NoteService.class);
            final NoteRepository repository = context.getBean(NoteRepository.class);
            final EntityManagerFactory emf = context.getBean(EntityManagerFactory.class);
            RoutingTestSupport.awaitReplicasUp(emf);

            assertThat(cluster.nodeForPort(service.readOnlyTransactionPort()).isPrimary())
                    .as(() -> "routing: " + RoutingStatus.of(emf))
                    .isFalse();

            RoutingTestSupport.onPrimary(cluster, "select txid_current()");
            cluster.awaitCaughtUp(Duration.ofSeconds(30));
            cluster.standbys().forEach(cluster::pauseReplay);
            final long id;
            try (RoutingScope request = RoutingScope.builder().actor("carol").open()) {
                id = service.create("carol's");
            }
            try (RoutingScope laterRequest =
                    RoutingScope.builder().actor("carol").open()) {
                assertThat(repository.findById(id)).isPresent();
            }
            try (RoutingScope someoneElse = RoutingScope.builder().actor("dave").open()) {
                assertThat(repository.findById(id))
                        .as(() -> "dave's read, on a paused replica (the default 10 s lag bound counts from the"
                                + " commit replayed just before the pause); routing: " + RoutingStatus.of(emf))
                        .isEmpty();
            }
        }
    }
}
