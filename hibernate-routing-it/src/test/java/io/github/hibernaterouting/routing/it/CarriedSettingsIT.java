package io.github.hibernaterouting.routing.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.RoutingSettings;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.testing.RoutingLeakCheck;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import jakarta.persistence.EntityManager;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.hibernate.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SET and RESET follow the unit of work across its physical connections: {@code SET LOCAL} until its
 * transaction ends, a {@code SET} undone everywhere when its transaction rolls back, a session
 * {@code SET} carried to the primary at the write and to a replica for a later {@code STALE_READ}
 * read, and a {@code SET} that failed not carried at all.
 */
@ExtendWith(RoutingLeakCheck.class)
class CarriedSettingsIT extends RoutingFixture {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(2);

    private static void run(Connection connection, String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.execute();
        }
    }

    /** Where the next read of {@code connection} runs ({@code standby} or {@code primary}) and what {@code name} is set to there. */
    private static String settingWhereRead(Connection connection, String name) throws SQLException {
        return settingWhereRead(connection, name, "");
    }

    private static String settingWhereRead(Connection connection, String name, String hint) throws SQLException {
        try (PreparedStatement query = connection.prepareStatement(hint
                + "select case when pg_is_in_recovery() then 'standby' else 'primary' end, current_setting(?, true)")) {
            query.setString(1, name);
            try (ResultSet rs = query.executeQuery()) {
                rs.next();
                return rs.getString(1) + ": " + rs.getString(2);
            }
        }
    }

    private static String settingWhereRead(EntityManager em, String name) {
        final String[] answer = new String[1];
        em.unwrap(Session.class).doWork(connection -> answer[0] = settingWhereRead(connection, name));
        return answer[0];
    }

    @Test
    void setLocal_inAReadWriteTransaction_holdsOnTheReplica_andFollowsTheTransactionToThePrimary() {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.createNativeQuery("set local statement_timeout = '4321ms'").executeUpdate();
            assertThat(settingWhereRead(em, "statement_timeout")).isEqualTo("standby: 4321ms");
            em.persist(new Note("under a statement timeout"));
            em.flush();
            assertThat(settingWhereRead(em, "statement_timeout"))
                    .as("carried over to the primary at the write")
                    .isEqualTo("primary: 4321ms");
            em.getTransaction().commit();
            em.getTransaction().begin();
            assertThat(settingWhereRead(em, "statement_timeout"))
                    .as("SET LOCAL ended with its transaction")
                    .isEqualTo("primary: 0");
            em.getTransaction().commit();
        }
    }

    @Test
    void setLocal_endsWithItsTransaction_evenWhenTheConnectionLivesOn() {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                connection.setAutoCommit(false);
                run(connection, "set local routing_it.step = 'one'");
                assertThat(settingWhereRead(connection, "routing_it.step")).isEqualTo("standby: one");
                run(connection, "insert into note (id, text) values (nextval('note_seq'), 'w')");
                assertThat(settingWhereRead(connection, "routing_it.step")).isEqualTo("primary: one");
                connection.commit();
                // The next transaction runs on a primary connection from the pool: it has no value, or an empty one.
                assertThat(settingWhereRead(connection, "routing_it.step"))
                        .as("not carried into the next transaction")
                        .isIn("primary: ", "primary: null");
                connection.commit();
                connection.setAutoCommit(true);
            });
        }
    }

    @Test
    void setInATransactionThatRollsBack_isUndoneEverywhere() {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                connection.setAutoCommit(false);
                run(connection, "set routing_it.mode = 'rolled back'");
                final Backend replica = backend(connection);
                assertThat(replica.state())
                        .as("the SET runs in a transaction on the replica, so a rollback undoes it there too")
                        .isEqualTo("idle in transaction");
                run(connection, "insert into note (id, text) values (nextval('note_seq'), 'w')");
                assertThat(settingWhereRead(connection, "routing_it.mode")).isEqualTo("primary: rolled back");
                connection.rollback();
                assertThat(settingWhereRead(connection, "routing_it.mode"))
                        .as("PostgreSQL undoes a SET whose transaction rolls back")
                        .doesNotContain("rolled back");
                connection.commit();
                connection.setAutoCommit(true);
            });
        }
    }

    @Test
    void set_outsideATransaction_followsTheUnitOfWorkToThePrimary_andBackToTheReplica() {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                run(connection, "set routing_it.tenant = 'acme'");
                assertThat(settingWhereRead(connection, "routing_it.tenant")).isEqualTo("standby: acme");
                run(
                        connection,
                        "insert into note (id, text) values (nextval('note_seq'), current_setting('routing_it.tenant'))");
                assertThat(settingWhereRead(connection, "routing_it.tenant")).isEqualTo("primary: acme");
                run(connection, "reset routing_it.tenant");
                assertThat(settingWhereRead(connection, "routing_it.tenant")).isEqualTo("primary: ");
            });
        }
        assertThat(textOfTheOnlyNote())
                .as("the write ran with the setting made before it")
                .isEqualTo("acme");
    }

    private static final String PRIMARY_HINT = "/*+ " + RoutingHints.strategy(Strategy.PRIMARY) + " */ ";

    @Test
    void staleRead_afterASettingOnThePrimary_getsTheSettingOnTheReplicaToo() {
        try (EntityManager em = emf.createEntityManager()) {
            em.setProperty(RoutingSettings.STRATEGY, Strategy.STALE_READ);
            em.unwrap(Session.class).doWork(connection -> {
                assertThat(settingWhereRead(connection, "routing_it.tenant")).isEqualTo("standby: null");
                run(connection, "insert into note (id, text) values (nextval('note_seq'), 'w')");
                // Under STALE_READ a SET would run on the replica; the hint makes this one run on the primary.
                run(connection, PRIMARY_HINT + "set routing_it.tenant = 'globex'");
                assertThat(settingWhereRead(connection, "routing_it.tenant", PRIMARY_HINT))
                        .isEqualTo("primary: globex");
                assertThat(settingWhereRead(connection, "routing_it.tenant"))
                        .as("STALE_READ reads the replica after the write")
                        .isEqualTo("standby: globex");
            });
        }
    }

    @Test
    void setThatFailed_isNotCarriedOver() {
        try (EntityManager em = emf.createEntityManager()) {
            em.unwrap(Session.class).doWork(connection -> {
                assertThatThrownBy(() -> run(connection, "set statement_timeout = 'banana'"))
                        .isInstanceOf(SQLException.class);
                run(connection, "insert into note (id, text) values (nextval('note_seq'), 'w')");
                assertThat(settingWhereRead(connection, "statement_timeout")).isEqualTo("primary: 0");
            });
        }
    }

    private static String textOfTheOnlyNote() {
        try (var c = cluster.connect(cluster.primary());
                var s = c.createStatement();
                var rs = s.executeQuery("select string_agg(text, ',') from note")) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }
}
