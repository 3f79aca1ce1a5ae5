package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;

import com.arjuna.ats.arjuna.common.ObjectStoreEnvironmentBean;
import com.arjuna.common.internal.util.propertyservice.BeanPopulator;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import io.agroal.narayana.NarayanaTransactionIntegration;
import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import jakarta.persistence.PersistenceUnitTransactionType;
import jakarta.transaction.TransactionManager;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.engine.transaction.jta.platform.internal.NarayanaJtaPlatform;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A read-only unit of work in a global transaction (a routed connection set read-only before its first statement,
 * or a Hibernate read-only session), as {@link JtaIT} sets JTA up: Narayana, the primary an Agroal pool that enlists
 * its connections, the replicas plain pools. When no replica has replayed what the unit of work must see, its reads
 * fall back to the primary, whose connection is then enlisted: Agroal refuses {@code setReadOnly} on it ("Attempted
 * to modify read-only state while enlisted in transaction"), so the library must leave its read-only state alone,
 * or the unit of work's first statement fails instead of reading on the primary.
 */
@ExtendWith(RoutingLeakCheck.class)
class JtaReadOnlyIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    static PostgresCluster cluster;
    static TransactionManager tm;
    static AgroalDataSource primary;
    static final List<HikariDataSource> replicas = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        cluster = DB.cluster();
        RoutingItSupport.createSchema(cluster);
        // Narayana's log of in-doubt transactions, under target/ rather than the working directory.
        BeanPopulator.getDefaultInstance(ObjectStoreEnvironmentBean.class)
                .setObjectStoreDir(Path.of("target", "narayana").toString());
        tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
        primary = enlisting(cluster.primary());
        for (Node standby : cluster.standbys()) {
            replicas.add(plainPool(standby));
        }
    }

    /** A pool whose connections join the current global transaction, as a container's JTA data source's do. */
    private static AgroalDataSource enlisting(Node node) throws SQLException {
        return AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(pool -> pool.maxSize(5)
                        .transactionIntegration(new NarayanaTransactionIntegration(
                                tm,
                                new com.arjuna.ats.internal.jta.transaction.arjunacore
                                        .TransactionSynchronizationRegistryImple()))
                        .connectionFactoryConfiguration(factory -> factory.jdbcUrl(node.jdbcUrl())
                                .principal(new NamePrincipal(cluster.user()))
                                .credential(new SimplePassword(cluster.password())))));
    }

    /** A pool that knows nothing of JTA, as replicas need. */
    private static HikariDataSource plainPool(Node standby) {
        final HikariConfig config = new HikariConfig();
        config.setPoolName("jta-read-only-it-" + standby.name());
        config.setJdbcUrl(standby.jdbcUrl());
        config.setUsername(cluster.user());
        config.setPassword(cluster.password());
        config.setMaximumPoolSize(3);
        return new HikariDataSource(config);
    }

    @AfterAll
    static void stop() {
        replicas.forEach(HikariDataSource::close);
        if (primary != null) {
            primary.close();
        }
    }

    @BeforeEach
    void emptyTables() throws SQLException {
        onPrimary(cluster, "delete from note");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
    }

    @AfterEach
    void noTransactionLeftOpen() throws Exception {
        cluster.standbys().forEach(cluster::resumeReplay);
        if (tm.getTransaction() != null) {
            tm.rollback();
            throw new AssertionError("a test left its JTA transaction open");
        }
    }

    private static EntityManagerFactory jtaUnit() {
        final PersistenceConfiguration configuration = new PersistenceConfiguration("jta-read-only-it")
                .transactionType(PersistenceUnitTransactionType.JTA)
                .managedClass(Note.class);
        final Map<String, Object> overrides = new HashMap<>();
        overrides.put("jakarta.persistence.jdbc.url", null);
        overrides.put("jakarta.persistence.jdbc.user", null);
        overrides.put("jakarta.persistence.jdbc.password", null);
        overrides.put(RoutingSettings.REPLICA_URLS, null);
        overrides.put(AvailableSettings.JAKARTA_JTA_DATASOURCE, primary);
        overrides.put(AvailableSettings.JTA_PLATFORM, NarayanaJtaPlatform.class.getName());
        overrides.put(RoutingSettings.REPLICA_DATASOURCES, replicas);
        // Paused standbys must stay eligible (up, within the lag bound) for reads that need nothing they lack.
        overrides.put(RoutingSettings.MAX_REPLICA_LAG, RoutingItSupport.LAG_BOUND_NO_TEST_REACHES);
        final EntityManagerFactory emf =
                RoutingTestSupport.emf(configuration, cluster, RoutingItSupport.withoutCache(overrides));
        RoutingTestSupport.awaitReplicasUp(emf);
        return emf;
    }

    /** A note written by {@code actor} in a committed global transaction, and the commit's position. */
    private record Written(long id, ConsistencyToken commit) {}

    private static Written writeInGlobalTransaction(EntityManagerFactory emf, String actor) throws Exception {
        try (RoutingScope scope = RoutingScope.builder().actor(actor).open()) {
            tm.begin();
            final Note note = new Note(actor + "'s note");
            try (EntityManager em = emf.createEntityManager()) {
                em.persist(note);
            }
            tm.commit();
            assertThat(scope.lastCommit())
                    .as("the global transaction's commit position is recorded in the scope")
                    .isNotNull();
            return new Written(note.id, scope.lastCommit());
        }
    }

    /** A piece of a test run inside a global transaction. */
    private interface Work {
        void run() throws Exception;
    }

    /** Runs {@code work} in a global transaction that commits, or rolls back if {@code work} fails. */
    private static void inGlobalTransaction(Work work) throws Exception {
        tm.begin();
        try {
            work.run();
        } catch (Throwable failure) {
            tm.rollback();
            throw failure;
        }
        tm.commit();
    }

    @Test
    void aConnectionSetReadOnly_inAGlobalTransaction_whoseMinimumNoReplicaReplayed_readsTheRowOnThePrimary()
            throws Exception {
        try (EntityManagerFactory emf = jtaUnit()) {
            cluster.standbys().forEach(cluster::pauseReplay);
            final Written written = writeInGlobalTransaction(emf, "ro-writer");
            try (RoutingScope ignored =
                    RoutingScope.builder().minimum(written.commit()).open()) {
                inGlobalTransaction(() -> {
                    try (EntityManager em = emf.createEntityManager()) {
                        // Before the unit of work's first statement: no physical connection is bound yet.
                        em.unwrap(Session.class).doWork(connection -> connection.setReadOnly(true));
                        assertThat(em.find(Note.class, written.id()))
                                .as("the row of the commit the scope's minimum names (%s)", routingState(emf))
                                .isNotNull();
                        assertThat(servedBy(cluster, em).isPrimary())
                                .as("the read fell back to the primary (%s)", routingState(emf))
                                .isTrue();
                    }
                });
            }
        }
    }

    @Test
    void aReadOnlySession_inAGlobalTransaction_whoseActorsWriteNoReplicaReplayed_readsTheRowOnThePrimary()
            throws Exception {
        try (EntityManagerFactory emf = jtaUnit()) {
            cluster.standbys().forEach(cluster::pauseReplay);
            final Written written = writeInGlobalTransaction(emf, "ro-alice");
            try (RoutingScope ignored = RoutingScope.builder().actor("ro-alice").open()) {
                inGlobalTransaction(() -> {
                    try (Session session = emf.unwrap(SessionFactory.class)
                            .withOptions()
                            .readOnly(true)
                            .openSession()) {
                        assertThat(session.find(Note.class, written.id()))
                                .as("the actor's own write (%s)", routingState(emf))
                                .isNotNull();
                        assertThat(servedBy(cluster, session).isPrimary())
                                .as("the read fell back to the primary (%s)", routingState(emf))
                                .isTrue();
                    }
                });
            }
        }
    }

    @Test
    void aConnectionSetReadOnly_inAGlobalTransaction_whoseMinimumAReplicaReplayed_readsOnTheReplica() throws Exception {
        try (EntityManagerFactory emf = jtaUnit()) {
            final Written written = writeInGlobalTransaction(emf, "ro-writer");
            RoutingItSupport.awaitCaughtUpAsSeenBy(cluster, emf);
            try (RoutingScope ignored =
                    RoutingScope.builder().minimum(written.commit()).open()) {
                inGlobalTransaction(() -> {
                    try (EntityManager em = emf.createEntityManager()) {
                        em.unwrap(Session.class).doWork(connection -> connection.setReadOnly(true));
                        assertThat(em.find(Note.class, written.id()))
                                .as("the row, replayed by the replicas (%s)", routingState(emf))
                                .isNotNull();
                        assertThat(servedBy(cluster, em).isPrimary())
                                .as("the read-only transaction reads on a replica (%s)", routingState(emf))
                                .isFalse();
                        assertThat(em.createNativeQuery("show transaction_read_only")
                                        .getSingleResult())
                                .as("in a read-only transaction there")
                                .isEqualTo("on");
                    }
                });
            }
            assertThat(primary.getMetrics().activeCount())
                    .as("the primary pool lent nothing out")
                    .isZero();
        }
    }
}
