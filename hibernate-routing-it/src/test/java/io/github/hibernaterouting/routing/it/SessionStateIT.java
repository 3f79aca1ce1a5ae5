package io.github.hibernaterouting.routing.it;

import static org.assertj.core.api.Assertions.assertThat;

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
 * Session state the classifier cannot follow keeps a unit of work off the replicas: after
 * {@code SET standard_conforming_strings} (the lexer assumes it is on, so a backslash could hide a
 * statement from it) every statement of the unit runs on the primary, the {@code SET} included, so no
 * pooled replica connection takes the setting; after a change of {@code search_path}, reads whose effect
 * depends on it ({@code current_schema()} creates the temporary schema when {@code pg_temp} comes first,
 * which a standby refuses) run on the primary. Both last for the unit of work only.
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

    private static String text(Connection connection, String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql);
                ResultSet rs = statement.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }
}
