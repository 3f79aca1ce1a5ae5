package io.github.hibernaterouting.routing.it;

import static io.github.hibernaterouting.testing.RoutingTestSupport.servedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import org.hibernate.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Session state the classifier cannot follow keeps a unit of work off the replicas: after
 * {@code SET standard_conforming_strings} (the lexer assumes it is on, so a backslash could hide a
 * statement from it) every statement of the unit runs on the primary, the {@code SET} included, so no
 * pooled replica connection takes the setting; after a change of {@code search_path}, reads whose effect
 * depends on it ({@code current_schema()} creates the temporary schema when {@code pg_temp} comes first,
 * which a standby refuses) run on the primary. Both last for the unit of work only. A temporary table
 * exists only on the primary connection that created it: after one, every read of the unit runs on the
 * primary, and under {@code REPLICA} a read is refused rather than answered from a replica.
 */
@ExtendWith(RoutingLeakCheck.class)
class SessionStateIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    @Test
    void standardConformingStringsOff_keepsTheRestOfTheUnitOnThePrimary_andNoReplicaConnectionTakesIt()
            throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                assertThat(nodeOf(connection).isPrimary()).as("before the SET").isFalse();
                sql(connection, "set standard_conforming_strings = off");
                assertThat(nodeOf(connection))
                        .as("every statement after the SET")
                        .isEqualTo(cluster.primary());
                assertThat(text(connection, "show standard_conforming_strings"))
                        .as("the setting holds where the unit runs")
                        .isEqualTo("off");
                sql(connection, "reset standard_conforming_strings");
                assertThat(nodeOf(connection)).as("also after a RESET").isEqualTo(cluster.primary());
            });
        }
        for (int i = 0; i < 6; i++) {
            try (EntityManager em = emf.createEntityManager()) {
                em.unwrap(Session.class).doWork(connection -> {
                    assertThat(nodeOf(connection).isPrimary())
                            .as("a later unit of work reads on a replica again")
                            .isFalse();
                    assertThat(text(connection, "show standard_conforming_strings"))
                            .as("no replica connection kept the setting")
                            .isEqualTo("on");
                });
            }
        }
    }

    @Test
    void currentSchema_afterSearchPathPutsPgTempFirst_runsOnThePrimary_otherReadsStayOnTheReplica()
            throws SQLException {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                sql(connection, "set search_path = pg_temp, public");
                assertThat(nodeOf(connection).isPrimary())
                        .as("a read that does not depend on search_path")
                        .isFalse();
                assertThat(text(connection, "select current_schema()"))
                        .as("current_schema() created the temporary schema: only the primary can")
                        .startsWith("pg_temp_");
                assertThat(text(connection, "select inet_server_port() || '/' || current_schema()"))
                        .as("where current_schema() ran")
                        .startsWith(cluster.primary().port() + "/");
            });
        }
    }

    /**
     * A persistence unit under {@code strategy} whose primary pool has one connection, so that every
     * connection of a unit of work on the primary is the one its temporary table lives on (Hibernate
     * releases the connection after each transaction), and whose replicas are up as it sees them.
     */
    private static EntityManagerFactory unitWithOnePrimaryConnection(Strategy strategy) {
        final EntityManagerFactory factory = RoutingItSupport.emf(
                cluster,
                Map.of(
                        RoutingSettings.STRATEGY,
                        strategy.name(),
                        RoutingSettings.PRIMARY_MAXIMUM_POOL_SIZE,
                        "1",
                        RoutingSettings.MAX_REPLICA_LAG,
                        RoutingItSupport.LAG_BOUND_NO_TEST_REACHES));
        RoutingItSupport.awaitCaughtUpAsSeenBy(cluster, factory);
        try (EntityManager em = factory.createEntityManager()) {
            assertThat(servedBy(cluster, em).isPrimary())
                    .as("reads of a unit without a temporary table go to a replica")
                    .isFalse();
        }
        return factory;
    }

    @ParameterizedTest
    @EnumSource(
            value = Strategy.class,
            names = {"STALE_READ", "READ_AFTER_WRITE"})
    void tempTableShadowingAPermanentTable_laterReadsOfTheUnitSeeTheTempTablesRows(Strategy strategy) {
        createNote("permanent");
        cluster.awaitCaughtUp(java.time.Duration.ofSeconds(30));
        try (EntityManagerFactory factory = unitWithOnePrimaryConnection(strategy)) {
            try (EntityManager em = factory.createEntityManager()) {
                em.getTransaction().begin();
                em.createNativeQuery("create temp table note (id bigint primary key, text text)")
                        .executeUpdate();
                em.createNativeQuery("insert into note values (1, 'temporary')").executeUpdate();
                em.getTransaction().commit();
                assertThat(em.createNativeQuery("select text from note", String.class)
                                .getResultList())
                        .as("after the transaction, the name means the unit's temporary table")
                        .containsExactly("temporary");
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("every read of the unit")
                        .isTrue();
                em.getTransaction().begin();
                em.createNativeQuery("drop table pg_temp.note").executeUpdate();
                em.getTransaction().commit();
            }
            try (EntityManager em = factory.createEntityManager()) {
                assertThat(servedBy(cluster, em).isPrimary())
                        .as("a later unit of work reads on a replica again")
                        .isFalse();
            }
        }
    }

    @Test
    void tempTableWithoutAPermanentNamesake_underStaleRead_laterReadsFindIt() {
        try (EntityManagerFactory factory = unitWithOnePrimaryConnection(Strategy.STALE_READ);
                EntityManager em = factory.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                sql(connection, "create temp table scratch (n int)");
                sql(connection, "insert into scratch values (7)");
                assertThat(text(connection, "select n::text from scratch"))
                        .as("no 'relation does not exist' from a replica")
                        .isEqualTo("7");
            });
            assertThat(em.createNativeQuery("select n from scratch", Integer.class)
                            .getResultList())
                    .as("also through a native query of the same EntityManager")
                    .containsExactly(7);
        }
    }

    @Test
    void tempTable_thenAReadUnderReplica_isRefusedNamingTheFix() {
        createNote("permanent");
        cluster.awaitCaughtUp(java.time.Duration.ofSeconds(30));
        try (EntityManagerFactory factory = unitWithOnePrimaryConnection(Strategy.STALE_READ);
                EntityManager em = factory.createEntityManager()) {
            em.getTransaction().begin();
            em.createNativeQuery("create temp table note (id bigint primary key, text text)")
                    .executeUpdate();
            em.getTransaction().commit();
            em.setProperty(RoutingSettings.STRATEGY, Strategy.REPLICA.name());
            assertThatThrownBy(() -> em.createNativeQuery("select text from note", String.class)
                            .getResultList())
                    .as("a replica would answer from the permanent table")
                    .hasStackTraceContaining("temporary table")
                    .hasStackTraceContaining("Strategy REPLICA never uses the primary")
                    .hasStackTraceContaining("Strategy.READ_AFTER_WRITE");
        }
    }

    private static String text(Connection connection, String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql);
                ResultSet rs = statement.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }
}
