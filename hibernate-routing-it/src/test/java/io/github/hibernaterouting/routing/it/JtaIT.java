package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.countOnPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.onPrimary;
import static io.github.hibernaterouting.testing.RoutingTestSupport.routingState;
import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static io.github.hibernaterouting.testing.RoutingTestSupport.stringOnPrimary;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.arjuna.ats.arjuna.common.ObjectStoreEnvironmentBean;
import com.arjuna.common.internal.util.propertyservice.BeanPopulator;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.AgroalConnectionFactoryConfiguration.TransactionIsolation;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import io.agroal.narayana.NarayanaTransactionIntegration;
import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testing.RoutingTestSupport;
import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import jakarta.persistence.PersistenceUnitTransactionType;
import jakarta.transaction.Status;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.hibernate.SessionFactory;
import org.hibernate.StatelessSession;
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
 * A JTA persistence unit, as a Jakarta EE server runs one: Narayana is the transaction manager, the
 * primary a transaction-aware Agroal pool enlisted in the global transaction, the replicas plain
 * pools. Reads go to a replica until the transaction writes (under {@code transactions=LAZY}; under
 * {@code PRIMARY}, and above READ COMMITTED, a read-write global transaction reads on the primary from
 * its first statement; a stateless session's too), a write is captured for
 * read-your-writes only once the global transaction commits, and one that rolls back leaves neither
 * a row nor a stamp.
 */
@ExtendWith(RoutingLeakCheck.class)
class JtaIT {
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
        onPrimary(
                cluster,
                "drop table if exists users; create table users (id text primary key, read_after_write_lsn pg_lsn);"
                        + " insert into users (id) values ('jta-alice'), ('jta-bob'), ('jta-carol')");
        cluster.awaitCaughtUp(Duration.ofSeconds(30));
        // Narayana's log of in-doubt transactions, under target/ rather than the working directory.
        BeanPopulator.getDefaultInstance(ObjectStoreEnvironmentBean.class)
                .setObjectStoreDir(Path.of("target", "narayana").toString());
        tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
        primary = enlisting(cluster.primary());
        for (Node standby : cluster.standbys()) {
            replicas.add(plainPool(standby, Duration.ofSeconds(30)));
        }
    }

    /** A pool whose connections join the current global transaction, as a container's JTA data source's do. */
    private static AgroalDataSource enlisting(Node node) throws SQLException {
        return enlisting(node, TransactionIsolation.UNDEFINED);
    }

    /** {@link #enlisting(Node)}, its connections at {@code isolation}. */
    private static AgroalDataSource enlisting(Node node, TransactionIsolation isolation) throws SQLException {
        return AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(pool -> pool.maxSize(5)
                        .transactionIntegration(new NarayanaTransactionIntegration(
                                tm,
                                new com.arjuna.ats.internal.jta.transaction.arjunacore
                                        .TransactionSynchronizationRegistryImple()))
                        .connectionFactoryConfiguration(factory -> factory.jdbcUrl(node.jdbcUrl())
                                .jdbcTransactionIsolation(isolation)
                                .principal(new NamePrincipal(cluster.user()))
                                .credential(new SimplePassword(cluster.password())))));
    }

    /** A pool that knows nothing of JTA, as replicas need. */
    private static HikariDataSource plainPool(Node standby, Duration connectionTimeout) {
        final HikariConfig config = new HikariConfig();
        config.setPoolName("jta-it-" + standby.name());
        config.setJdbcUrl(standby.jdbcUrl());
        config.setUsername(cluster.user());
        config.setPassword(cluster.password());
        config.setMaximumPoolSize(3);
        config.setConnectionTimeout(connectionTimeout.toMillis());
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
        onPrimary(cluster, "delete from note; update users set read_after_write_lsn = null");
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

    private static EntityManagerFactory jtaUnit(Map<String, Object> extra) {
        final PersistenceConfiguration configuration = new PersistenceConfiguration("jta-it")
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
        // Tests pause replay and expect the paused standbys to serve other actors, however slow this machine is.
        overrides.put(RoutingSettings.MAX_REPLICA_LAG, RoutingItSupport.LAG_BOUND_NO_TEST_REACHES);
        overrides.putAll(extra);
        final EntityManagerFactory emf =
                RoutingTestSupport.emf(configuration, cluster, RoutingItSupport.withoutCache(overrides));
        RoutingTestSupport.awaitReplicasUp(emf);
        return emf;
    }

    /**
     * A JTA unit with {@code replica} as its only replica, {@code FALLBACK}, and no periodic health check:
     * only what the unit's own reads meet changes what it knows of the replica.
     */
    private static EntityManagerFactory fallbackUnitReadingOnly(HikariDataSource replica) {
        return jtaUnit(Map.of(
                RoutingSettings.REPLICA_DATASOURCES, List.of(replica),
                RoutingSettings.REPLICA_FAILURE, "FALLBACK",
                RoutingSettings.HEALTH_CHECK_INTERVAL, "1h"));
    }

    private static long writeInGlobalTransaction(EntityManagerFactory emf, String actor, String text) throws Exception {
        try (RoutingScope scope = RoutingScope.builder().actor(actor).open()) {
            tm.begin();
            final Note note = new Note(text);
            try (EntityManager em = emf.createEntityManager()) {
                em.persist(note);
            }
            tm.commit();
            assertThat(scope.lastCommit())
                    .as("the global transaction's commit position is recorded in the scope")
                    .isNotNull();
            return note.id;
        }
    }

    @Test
    void readsInAGlobalTransaction_goToAReplica_untilItWrites_thenToThePrimary() throws Exception {
        try (EntityManagerFactory emf = jtaUnit(Map.of())) {
            tm.begin();
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("a read before any write (%s)", routingState(emf))
                        .isFalse();
                em.persist(new Note("escalates"));
                em.flush();
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("a read after the flush, in the same global transaction")
                        .isTrue();
                assertThat(em.createQuery("select count(n) from Note n", Long.class)
                                .getSingleResult())
                        .as("the read sees the transaction's own uncommitted row")
                        .isEqualTo(1L);
            }
            tm.commit();
            assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
        }
    }

    /**
     * A note committed through {@code emf} and replayed on every standby as {@code "replayed"}, then
     * changed to {@code "changed"} on the primary behind the standbys' backs, their replay paused: a read
     * that returns {@code "replayed"} ran on a replica.
     */
    private static long noteChangedBehindThePausedStandbys(EntityManagerFactory emf) throws Exception {
        tm.begin();
        final Note note = new Note("replayed");
        try (EntityManager em = emf.createEntityManager()) {
            em.persist(note);
        }
        tm.commit();
        RoutingItSupport.awaitCaughtUpAsSeenBy(cluster, emf);
        cluster.standbys().forEach(cluster::pauseReplay);
        onPrimary(cluster, "update note set text = 'changed' where id = " + note.id);
        return note.id;
    }

    private static String textOf(EntityManager em, long id) {
        return em.find(Note.class, id).text;
    }

    /**
     * Runs {@code work} in a global transaction and commits it; rolls it back if {@code work} fails, so
     * that a failed assertion leaves no transaction open and no connection borrowed.
     */
    private static void inGlobalTransaction(Runnable work) throws Exception {
        tm.begin();
        try {
            work.run();
        } catch (RuntimeException | Error e) {
            tm.rollback();
            throw e;
        }
        tm.commit();
    }

    @Test
    void underTransactionsPrimary_aGlobalTransactionReadsOnThePrimaryFromItsFirstStatement_andOtherReadsOnAReplica()
            throws Exception {
        try (EntityManagerFactory emf = jtaUnit(Map.of(RoutingSettings.TRANSACTIONS, "PRIMARY"))) {
            final long id = noteChangedBehindThePausedStandbys(emf);
            inGlobalTransaction(() -> {
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(textOf(em, id))
                            .as("the global transaction's first read, before any write (%s)", routingState(emf))
                            .isEqualTo("changed");
                    assertThat(servedBy(cluster, em).isPrimary())
                            .as("its next read (%s)", routingState(emf))
                            .isTrue();
                }
            });
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(textOf(em, id))
                        .as("a read outside a global transaction (%s)", routingState(emf))
                        .isEqualTo("replayed");
            }
        }
    }

    @Test
    void underTransactionsLazy_aGlobalTransactionReadsOnAReplica_untilItsFirstWrite() throws Exception {
        // LAZY is the default.
        try (EntityManagerFactory emf = jtaUnit(Map.of())) {
            final long id = noteChangedBehindThePausedStandbys(emf);
            inGlobalTransaction(() -> {
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(textOf(em, id))
                            .as("the global transaction's first read, before any write (%s)", routingState(emf))
                            .isEqualTo("replayed");
                    em.persist(new Note("the first write"));
                    em.flush();
                    assertThat(em.createNativeQuery("select text from note where id = " + id, String.class)
                                    .getSingleResult())
                            .as("a read after the first write (%s)", routingState(emf))
                            .isEqualTo("changed");
                }
            });
        }
    }

    @Test
    void underProviderDisablesAutocommit_aReadOutsideAnyGlobalTransactionGoesToAReplica() throws Exception {
        // As the Quarkus extension configures Hibernate by default: Quarkus sets provider_disables_autocommit, the
        // extension transactions=PRIMARY. Under JTA, Hibernate never switches auto-commit.
        try (EntityManagerFactory emf = jtaUnit(Map.of(
                AvailableSettings.CONNECTION_PROVIDER_DISABLES_AUTOCOMMIT, "true",
                RoutingSettings.TRANSACTIONS, "PRIMARY"))) {
            final long id = noteChangedBehindThePausedStandbys(emf);
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(textOf(em, id))
                        .as("a read outside any global transaction (%s)", routingState(emf))
                        .isEqualTo("replayed");
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("the next read outside any global transaction (%s)", routingState(emf))
                        .isFalse();
            }
            inGlobalTransaction(() -> {
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(textOf(em, id))
                            .as("a global transaction's first read, before any write (%s)", routingState(emf))
                            .isEqualTo("changed");
                }
            });
        }
    }

    @Test
    void aRepeatableReadGlobalTransaction_readsOnThePrimary_andAReadOutsideOneOnAReplica() throws Exception {
        // The pool's connections run at REPEATABLE READ; hibernate.connection.isolation tells the library so
        // (it does not change the connections of the application's own data source).
        try (AgroalDataSource repeatableRead = enlisting(cluster.primary(), TransactionIsolation.REPEATABLE_READ);
                EntityManagerFactory emf = jtaUnit(Map.of(
                        AvailableSettings.JAKARTA_JTA_DATASOURCE,
                        repeatableRead,
                        AvailableSettings.ISOLATION,
                        "REPEATABLE_READ"))) {
            final long id = noteChangedBehindThePausedStandbys(emf);
            inGlobalTransaction(() -> {
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(textOf(em, id))
                            .as("the global transaction's first read, before any write (%s)", routingState(emf))
                            .isEqualTo("changed");
                    assertThat(em.createNativeQuery("show transaction_isolation", String.class)
                                    .getSingleResult())
                            .as("the level the transaction runs at, on the primary")
                            .isEqualTo("repeatable read");
                }
            });
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(textOf(em, id))
                        .as("a read outside a global transaction (%s)", routingState(emf))
                        .isEqualTo("replayed");
            }
        }
    }

    @Test
    void aStatelessSessionInAGlobalTransaction_readsOnThePrimary_andOutsideOneOnAReplica() throws Exception {
        try (EntityManagerFactory emf = jtaUnit(Map.of())) {
            final long id = noteChangedBehindThePausedStandbys(emf);
            inGlobalTransaction(() -> {
                try (StatelessSession session = emf.unwrap(SessionFactory.class).openStatelessSession()) {
                    assertThat(session.get(Note.class, id).text)
                            .as("a stateless session's read in a global transaction (%s)", routingState(emf))
                            .isEqualTo("changed");
                }
            });
            try (StatelessSession session = emf.unwrap(SessionFactory.class).openStatelessSession()) {
                assertThat(session.get(Note.class, id).text)
                        .as("a stateless session's read outside a global transaction (%s)", routingState(emf))
                        .isEqualTo("replayed");
            }
        }
    }

    @Test
    void aCommittedGlobalTransaction_isReadByItsActor_whileEveryReplicaLacksIt() throws Exception {
        try (EntityManagerFactory emf = jtaUnit(Map.of())) {
            cluster.standbys().forEach(cluster::pauseReplay);
            final long id = writeInGlobalTransaction(emf, "jta-alice", "alice's note");
            try (RoutingScope ignored =
                    RoutingScope.builder().actor("jta-alice").open()) {
                tm.begin();
                try (EntityManager em = emf.createEntityManager()) {
                    assertThat(em.find(Note.class, id))
                            .as("the actor's own write")
                            .isNotNull();
                    assertThat(servedBy(cluster, em).isPrimary())
                            .as("the actor's read (%s)", routingState(emf))
                            .isTrue();
                }
                tm.commit();
            }
            try (RoutingScope ignored = RoutingScope.builder().actor("jta-bob").open();
                    EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("another actor still reads from a replica (%s)", routingState(emf))
                        .isFalse();
                assertThat(em.find(Note.class, id)).as("which lacks the write").isNull();
            }
        }
    }

    /**
     * A data source that, as some transaction managers and pools do, hands out no connection once the
     * global transaction has completed: the commit's position must be captured without one.
     */
    private static DataSource refusingAfterCompletion(AgroalDataSource pool) {
        return (DataSource) java.lang.reflect.Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        final int status = tm.getStatus();
                        if (status == Status.STATUS_COMMITTED || status == Status.STATUS_ROLLEDBACK) {
                            throw new SQLException("No connection after the transaction completed");
                        }
                    }
                    try {
                        return method.invoke(pool, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aCommitsPosition_andTheActorsTableStamp_needNoConnectionAfterCompletion() throws Exception {
        final Map<String, Object> settings = new HashMap<>();
        settings.put(AvailableSettings.JAKARTA_JTA_DATASOURCE, refusingAfterCompletion(primary));
        settings.put(RoutingSettings.ACTOR_STAMPS, "TABLE");
        try (EntityManagerFactory emf = jtaUnit(settings)) {
            cluster.standbys().forEach(cluster::pauseReplay);
            final long id = writeInGlobalTransaction(emf, "jta-alice", "stamped");
            assertThat(stringOnPrimary(cluster, "select read_after_write_lsn::text from users where id = 'jta-alice'"))
                    .as("the stamp in the actors' table")
                    .isNotNull();
            try (RoutingScope ignored =
                            RoutingScope.builder().actor("jta-alice").open();
                    EntityManager em = emf.createEntityManager()) {
                assertThat(em.find(Note.class, id))
                        .as("the actor reads its write")
                        .isNotNull();
            }
        }
        try (EntityManagerFactory emf = jtaUnit(Map.of(RoutingSettings.ACTOR_STAMPS, "TABLE"))) {
            try (RoutingScope scope = RoutingScope.builder().actor("jta-bob").open()) {
                tm.begin();
                try (EntityManager em = emf.createEntityManager()) {
                    em.persist(new Note("rolled back"));
                }
                tm.rollback();
            }
            assertThat(stringOnPrimary(cluster, "select read_after_write_lsn::text from users where id = 'jta-bob'"))
                    .as("a rollback leaves no stamp")
                    .isNull();
        }
    }

    @Test
    void aRolledBackGlobalTransaction_leavesNoRow_andNoPositionForItsActor() throws Exception {
        try (EntityManagerFactory emf = jtaUnit(Map.of())) {
            cluster.standbys().forEach(cluster::pauseReplay);
            try (RoutingScope scope = RoutingScope.builder().actor("jta-carol").open()) {
                tm.begin();
                try (EntityManager em = emf.createEntityManager()) {
                    em.persist(new Note("rolled back"));
                    em.flush();
                }
                tm.rollback();
                assertThat(scope.lastCommit()).as("nothing committed").isNull();
            }
            assertThat(countOnPrimary(cluster, "note")).isZero();
            try (RoutingScope ignored =
                            RoutingScope.builder().actor("jta-carol").open();
                    EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as(
                                "the actor has no write to wait for: its reads stay on the replicas (%s)",
                                routingState(emf))
                        .isFalse();
            }
        }
    }

    @Test
    void aReadOnlyGlobalTransaction_runsOnAReplica_andRecordsNothing() throws Exception {
        try (EntityManagerFactory emf = jtaUnit(Map.of())) {
            try (RoutingScope scope = RoutingScope.builder().actor("jta-bob").open()) {
                tm.begin();
                try (EntityManager em = emf.createEntityManager()) {
                    em.createQuery("select n from Note n", Note.class).getResultList();
                    assertThat(servedBy(cluster, em).isPrimary())
                            .as("a replica (%s)", routingState(emf))
                            .isFalse();
                }
                tm.commit();
                assertThat(scope.lastCommit()).isNull();
                assertThat(scope.hasWritten()).isFalse();
            }
            assertThat(primary.getMetrics().activeCount())
                    .as("the primary pool lent nothing out")
                    .isZero();
        }
    }

    @Test
    void tableStamps_areRaisedWhenTheGlobalTransactionCommits() throws Exception {
        try (EntityManagerFactory emf = jtaUnit(Map.of(RoutingSettings.ACTOR_STAMPS, "TABLE"))) {
            cluster.standbys().forEach(cluster::pauseReplay);
            final ConsistencyToken committed;
            try (RoutingScope scope = RoutingScope.builder().actor("jta-alice").open()) {
                tm.begin();
                try (EntityManager em = emf.createEntityManager()) {
                    em.persist(new Note("stamped"));
                }
                tm.commit();
                committed = scope.lastCommit();
            }
            assertThat(committed).isNotNull();
            assertThat(ReadYourWrites.stampOf(emf, "jta-alice"))
                    .as("the actor's stamp in the users table covers the commit")
                    .isNotNull()
                    .satisfies(stamp -> assertThat(stamp.compareTo(committed)).isGreaterThanOrEqualTo(0));
            try (RoutingScope scope = RoutingScope.builder().actor("jta-carol").open()) {
                tm.begin();
                try (EntityManager em = emf.createEntityManager()) {
                    em.persist(new Note("not stamped"));
                    em.flush();
                }
                tm.rollback();
            }
            assertThat(ReadYourWrites.stampOf(emf, "jta-carol"))
                    .as("a rolled-back transaction stamps nothing")
                    .isNull();
        }
    }

    /**
     * {@code actor_stamps=TABLE}: an outer global transaction of the actor locks the actor's row, and an
     * inner one ({@code REQUIRES_NEW}: the outer suspended on the same thread) commits a write. Neither
     * the stamp inside the inner transaction nor the one after its commit may wait for the outer's lock,
     * since the outer waits for the inner. The actor's next read, with every standby lacking the write,
     * still sees it.
     */
    @Test
    void requiresNewCommit_whileTheOuterGlobalTransactionLocksTheActorsRow_completes_andTheActorReadsItsWrite()
            throws Exception {
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        try (EntityManagerFactory emf = jtaUnit(Map.of(RoutingSettings.ACTOR_STAMPS, "TABLE"))) {
            cluster.standbys().forEach(cluster::pauseReplay);
            final Future<Long> nested = thread.submit(() -> {
                try (RoutingScope ignored =
                        RoutingScope.builder().actor("jta-alice").open()) {
                    // The test's own bound fails it first, not the transaction manager's.
                    tm.setTransactionTimeout(600);
                    tm.begin();
                    try {
                        try (EntityManager outer = emf.createEntityManager()) {
                            outer.createNativeQuery("select id from users where id = 'jta-alice' for update")
                                    .getResultList();
                        }
                        final Transaction suspended = tm.suspend();
                        final long id;
                        try {
                            id = writeInGlobalTransaction(emf, "jta-alice", "written while the outer holds the row");
                        } finally {
                            tm.resume(suspended);
                        }
                        tm.commit();
                        return id;
                    } finally {
                        if (tm.getTransaction() != null) {
                            tm.rollback();
                        }
                        tm.setTransactionTimeout(0);
                    }
                }
            });
            final long id;
            try {
                id = nested.get(60, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError(
                        "the inner commit did not complete within 60 seconds: it waits without a bound", e);
            }
            try (RoutingScope ignored =
                            RoutingScope.builder().actor("jta-alice").open();
                    EntityManager em = emf.createEntityManager()) {
                assertThat(em.find(Note.class, id))
                        .as("the actor reads its write")
                        .isNotNull();
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("every standby lacks the write (%s)", routingState(emf))
                        .isTrue();
            }
        } finally {
            cluster.standbys().forEach(cluster::resumeReplay);
            RoutingItSupport.endSessionsStuckOnLocks(cluster);
            thread.shutdownNow();
        }
    }

    /**
     * The primary's health check hangs (a server that stopped answering it), holding the library's own
     * connection to the primary: a JTA commit still records its position, which it reads on a
     * connection of its own, not the health check's.
     */
    @Test
    void jtaCommit_whileThePrimaryHealthCheckHangs_stillRecordsItsPosition() throws Exception {
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        final AgroalDataSource blockable = AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                .connectionPoolConfiguration(pool -> pool.maxSize(5)
                        .transactionIntegration(new NarayanaTransactionIntegration(
                                tm,
                                new com.arjuna.ats.internal.jta.transaction.arjunacore
                                        .TransactionSynchronizationRegistryImple()))
                        .connectionFactoryConfiguration(
                                factory -> factory.jdbcUrl(cluster.primary().jdbcUrl())
                                        .connectionProviderClass(BlockableDriver.class)
                                        .principal(new NamePrincipal(cluster.user()))
                                        .credential(new SimplePassword(cluster.password())))));
        try (blockable;
                EntityManagerFactory emf = jtaUnit(Map.of(
                        AvailableSettings.JAKARTA_JTA_DATASOURCE, blockable, RoutingSettings.ACTOR_STAMPS, "TABLE"))) {
            BlockableDriver.block(cluster.primary().jdbcUrl(), BlockableDriver.PRIMARY_CHECK);
            BlockableDriver.awaitHanging(Duration.ofSeconds(60));
            final Future<Long> write =
                    thread.submit(() -> writeInGlobalTransaction(emf, "jta-bob", "written while the check hangs"));
            try {
                write.get(60, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError(
                        "the JTA commit did not complete within 60 seconds while the primary's health" + " check hung",
                        e);
            }
        } finally {
            BlockableDriver.unblockAll();
            thread.shutdownNow();
        }
    }

    @Test
    void aReplicaThatCannotGiveAConnection_underFallback_leavesTheReadToTheEnlistedPrimary() throws Exception {
        final Node standby = cluster.standby(2);
        try (HikariDataSource only = plainPool(standby, Duration.ofMillis(250));
                EntityManagerFactory emf = fallbackUnitReadingOnly(only)) {
            cluster.stop(standby);
            only.getHikariPoolMXBean().softEvictConnections();
            tm.begin();
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("the read falls back to the primary (%s)", routingState(emf))
                        .isTrue();
                em.persist(new Note("after the fallback"));
                em.flush();
                assertThat(primary.getMetrics().activeCount())
                        .as("one enlisted primary connection serves the fallback read and the write")
                        .isLessThanOrEqualTo(1);
            }
            tm.commit();
            assertThat(countOnPrimary(cluster, "note")).isEqualTo(1);
        } finally {
            cluster.start(standby);
        }
    }

    @Test
    void aReplicaKilledDuringAGlobalTransactionThatHasWritten_doesNotStopItsReadsOrItsCommit() throws Exception {
        final Node standby = cluster.standby(1);
        try (HikariDataSource only = plainPool(standby, Duration.ofMillis(250));
                EntityManagerFactory emf = fallbackUnitReadingOnly(only)) {
            tm.begin();
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em))
                        .as("the transaction's first read runs on the standby (%s)", routingState(emf))
                        .isEqualTo(standby);
                em.persist(new Note("before the kill"));
                em.flush();
                cluster.kill(standby);
                assertThat(servedBy(cluster, em).isPrimary())
                        .as(
                                "after its write the transaction reads on its enlisted primary connection (%s)",
                                routingState(emf))
                        .isTrue();
                em.persist(new Note("after the kill"));
            }
            tm.commit();
            assertThat(countOnPrimary(cluster, "note"))
                    .as("both writes committed, although the replica the transaction had read from died")
                    .isEqualTo(2);
        } finally {
            cluster.start(standby);
        }
    }

    @Test
    void aReplicaKilledDuringAReadOnlyGlobalTransaction_failsItsNextRead_andTheNextTransactionReadsElsewhere()
            throws Exception {
        final Node standby = cluster.standby(1);
        try (HikariDataSource only = plainPool(standby, Duration.ofMillis(250));
                EntityManagerFactory emf = fallbackUnitReadingOnly(only)) {
            tm.begin();
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em))
                        .as("the transaction's first read runs on the standby (%s)", routingState(emf))
                        .isEqualTo(standby);
                cluster.kill(standby);
                // The transaction's reads are bound to that standby, so that they never go back in time:
                // its next read fails with the connection's error; the library does not re-run it elsewhere.
                assertThatThrownBy(() -> servedBy(cluster, em))
                        .satisfies(e -> assertThat(sqlState(e))
                                .as("the SQLSTATE of %s", e)
                                .matches("08...|57P0[123]"));
                assertThat(tm.getStatus())
                        .as("Hibernate marks the global transaction for rollback")
                        .isEqualTo(Status.STATUS_MARKED_ROLLBACK);
            } finally {
                tm.rollback();
            }
            tm.begin();
            try (EntityManager em = emf.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("the next global transaction falls back to the primary (%s)", routingState(emf))
                        .isTrue();
            }
            tm.commit();
        } finally {
            cluster.start(standby);
        }
    }

    /** The SQLSTATE of the first {@link SQLException} in {@code failure}'s cause chain, or {@code null}. */
    private static String sqlState(Throwable failure) {
        for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof SQLException e && e.getSQLState() != null) {
                return e.getSQLState();
            }
        }
        return null;
    }

    @Test
    void aReplicaDataSourceThatJoinsTheGlobalTransaction_failsTheRead_namingTheFix() throws Exception {
        try (AgroalDataSource joining = enlisting(cluster.standby(1));
                EntityManagerFactory emf = jtaUnit(Map.of(RoutingSettings.REPLICA_DATASOURCES, List.of(joining)))) {
            tm.begin();
            try (EntityManager em = emf.createEntityManager()) {
                assertThatThrownBy(() -> em.find(Note.class, 1L))
                        .satisfies(e -> assertThat(RoutingItSupport.causeOfType(e, RoutingConfigurationException.class))
                                .as("the cause")
                                .isNotNull()
                                .extracting(Throwable::getMessage)
                                .asString()
                                .contains(RoutingSettings.REPLICA_DATASOURCES)
                                .contains("transactional=\"false\""));
            } finally {
                tm.rollback();
            }
            assertThat(RoutingStatus.of(emf).nodes())
                    .as("a configuration error is not a replica failure")
                    .allMatch(RoutingStatus.Node::up);
        }
    }
}
