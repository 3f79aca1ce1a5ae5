package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.AsyncReader;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.NoteRepository;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.NoteService;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManagerFactory;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.orm.ObjectOptimisticLockingFailureException;

/**
 * Spring's transactions on the real cluster: where {@code @Transactional(readOnly = true)}, Spring Data's
 * read methods and read-write transactions run, under both transaction modes, and read-your-writes
 * while the standbys' replay is paused.
 */
class SpringTransactionsIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER = PostgresClusterExtension.withStandbys(2);

    static PostgresCluster cluster() {
        return CLUSTER.cluster();
    }

    /** Pauses replay on every standby once they replayed everything the tests wrote so far. */
    static void pauseStandbys() throws Exception {
        awaitCaughtUp();
        cluster().standbys().forEach(cluster()::pauseReplay);
    }

    static void awaitCaughtUp() {
        cluster().awaitCaughtUp(Duration.ofSeconds(30));
    }

    /** The application as a user configures it: replica URLs only, the starter's default transaction mode. */
    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class DefaultTransactionMode {
        ConfigurableApplicationContext context;
        NoteService service;
        NoteRepository repository;

        @BeforeAll
        void start() {
            context = TestApplication.start(cluster(), Map.of());
            service = context.getBean(NoteService.class);
            repository = context.getBean(NoteRepository.class);
            RoutingTestSupport.awaitReplicasUp(context.getBean(EntityManagerFactory.class));
        }

        @AfterAll
        void stop() {
            context.close();
        }

        @Test
        void readOnlyTransaction_runsOnAReplica() {
            final Node node = cluster().nodeForPort(service.readOnlyTransactionPort());
            assertThat(node.isPrimary()).as("served by %s", node).isFalse();
        }

        @Test
        void repositoryRead_runsOnAReplica_soARowItHasNotReplayedIsNotFound() throws Exception {
            pauseStandbys();
            final long id = RoutingTestSupport.longOnPrimary(
                    cluster(), "insert into boot_note (text) values ('behind the replicas') returning id");

            assertThat(repository.findById(id)).isEmpty();
            assertThat(repository.existsById(id)).isFalse();
        }

        @Test
        void routingStrategyOnABeanMethod_keepsItsReadOnlyTransactionOnThePrimary() {
            final Node node = cluster().nodeForPort(service.primaryAnnotatedReadOnlyTransactionPort());
            assertThat(node.isPrimary()).as("served by %s", node).isTrue();
        }

        @Test
        void readWriteTransaction_runsOnThePrimaryFromItsFirstStatement() {
            final Node node = cluster().nodeForPort(service.readWriteTransactionFirstReadPort());
            assertThat(node.isPrimary()).as("served by %s", node).isTrue();
        }

        @Test
        void writeThenReadInTheSameTransaction_seesTheWrite_whileReplicasArePaused() throws Exception {
            pauseStandbys();
            assertThat(service.createAndRead("same transaction")).contains("same transaction");
        }

        @Test
        void writeThenReadInTheNextTransaction_ofTheSameActor_seesTheWrite_whileReplicasArePaused() throws Exception {
            pauseStandbys();
            final long id;
            try (RoutingScope request = RoutingScope.builder().actor("alice").open()) {
                id = service.create("next transaction");
            }
            try (RoutingScope nextRequest =
                    RoutingScope.builder().actor("alice").open()) {
                assertThat(service.text(id)).contains("next transaction");
                assertThat(repository.findById(id)).isPresent();
            }
            // Another actor reads on a replica, which has not replayed the write.
            try (RoutingScope someoneElse = RoutingScope.builder().actor("bob").open()) {
                assertThat(repository.findById(id)).isEmpty();
            }
        }

        @Test
        void asyncMethod_runsInTheCallersRoutingScope_soItReadsTheCallersWrite_whileReplicasArePaused()
                throws Exception {
            final AsyncReader reader = context.getBean(AsyncReader.class);
            pauseStandbys();
            try (RoutingScope request = RoutingScope.builder().actor("erin").open()) {
                final long id = service.create("read by a worker");
                assertThat(reader.text(id).get(30, TimeUnit.SECONDS)).contains("read by a worker");
            }
            // Without the caller's scope the worker reads on a replica, which has not replayed the write.
            final long other;
            try (RoutingScope request = RoutingScope.builder().actor("erin").open()) {
                other = service.create("not carried");
            }
            assertThat(reader.text(other).get(30, TimeUnit.SECONDS)).isEmpty();
        }

        @Test
        void asyncMethod_keepsTheCallersFloors_forcePrimaryAndAClientsToken_whileReplicasArePaused() throws Exception {
            final AsyncReader reader = context.getBean(AsyncReader.class);
            final long id = service.create("before");
            RoutingTestSupport.awaitReplicasUp(context.getBean(jakarta.persistence.EntityManagerFactory.class));
            cluster().awaitCaughtUp(java.time.Duration.ofSeconds(30));
            pauseStandbys();
            RoutingTestSupport.onPrimary(cluster(), "update boot_note set text = 'changed' where id = " + id);
            // What X-Force-Primary and Consistency: strong make of a request.
            try (RoutingScope request = RoutingScope.builder()
                    .strategy(Strategy.STALE_READ)
                    .floor(Strategy.PRIMARY)
                    .open()) {
                assertThat(reader.text(id).get(30, TimeUnit.SECONDS)).contains("changed");
            }
            // What a client's X-Consistency-Token makes of one: a position floor, under every strategy.
            final ConsistencyToken token = ConsistencyToken.ofPosition(RoutingTestSupport.longOnPrimary(
                    cluster(), "select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"));
            try (RoutingScope request = RoutingScope.builder()
                    .strategy(Strategy.STALE_READ)
                    .floor(token)
                    .open()) {
                assertThat(reader.text(id).get(30, TimeUnit.SECONDS)).contains("changed");
            }
        }

        @Test
        void staleRowThenUpdate_underPrimaryTransactions_readsTheCurrentRowAndWrites() throws Exception {
            final long id = service.create("first");
            pauseStandbys();
            RoutingTestSupport.onPrimary(cluster(), "update boot_note set text = 'changed elsewhere' where id = " + id);

            service.rename(id, "renamed");

            assertThat(RoutingTestSupport.longOnPrimary(
                            cluster(), "select count(*) from boot_note where text = 'renamed' and id = " + id))
                    .isEqualTo(1);
        }
    }

    /** {@code hibernate.routing.transactions=LAZY}: read-write transactions start on a replica, as the library's default. */
    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class LazyTransactionMode {
        ConfigurableApplicationContext context;
        NoteService service;

        @BeforeAll
        void start() {
            context = TestApplication.start(cluster(), Map.of("hibernate.routing.transactions", "LAZY"));
            service = context.getBean(NoteService.class);
            RoutingTestSupport.awaitReplicasUp(context.getBean(EntityManagerFactory.class));
        }

        @AfterAll
        void stop() {
            context.close();
        }

        @Test
        void readWriteTransaction_readsOnAReplicaUntilItsFirstWrite() {
            final Node node = cluster().nodeForPort(service.readWriteTransactionFirstReadPort());
            assertThat(node.isPrimary()).as("served by %s", node).isFalse();
        }

        @Test
        void staleRowThenUpdate_failsInsteadOfOverwritingTheNewerRow() throws Exception {
            final long id = service.create("first");
            pauseStandbys();
            RoutingTestSupport.onPrimary(cluster(), "update boot_note set text = 'changed elsewhere' where id = " + id);

            assertThatThrownBy(() -> service.rename(id, "renamed"))
                    .isInstanceOf(ObjectOptimisticLockingFailureException.class);
            assertThat(RoutingTestSupport.longOnPrimary(
                            cluster(),
                            "select count(*) from boot_note where text = 'changed elsewhere' and id = " + id))
                    .isEqualTo(1);
        }

        @Test
        void writeThenReadInTheSameTransaction_seesTheWrite_whileReplicasArePaused() throws Exception {
            pauseStandbys();
            assertThat(service.createAndRead("lazy, same transaction")).contains("lazy, same transaction");
        }
    }
}
