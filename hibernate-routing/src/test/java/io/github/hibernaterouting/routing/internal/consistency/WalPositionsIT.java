package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.testkit.Node;
import io.github.hibernaterouting.testkit.PostgresCluster;
import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.replication.LogSequenceNumber;

/**
 * The primary's insert position against what a standby reports once it has replayed everything before it, on a
 * real primary and standby, at a WAL page boundary above all: there the insert position points past the next
 * page's header, and a standby that has replayed the last record reports the boundary.
 */
class WalPositionsIT {
    @RegisterExtension
    static final PostgresClusterExtension DB = PostgresClusterExtension.withStandbys(1);

    private static final long PAGE = 8192;
    private static final long SEGMENT = 16L * 1024 * 1024;

    private static long replayable(PostgresCluster cluster, long insertLsn) throws SQLException {
        try (Connection c = cluster.connect(cluster.primary());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "select " + WalPositions.replayable("'" + Lsn.format(insertLsn) + "'::pg_lsn") + "::text")) {
            rs.next();
            return Lsn.parse(rs.getString(1));
        }
    }

    @Test
    void positionRightAfterAPageHeader_isThePageBoundary_otherPositionsAreThemselves(PostgresCluster cluster)
            throws SQLException {
        final long page = 0x1502000L;
        final long segment = 0x3000000L;
        assertThat(replayable(cluster, page + 24))
                .as("after a page's short header")
                .isEqualTo(page);
        assertThat(replayable(cluster, segment + 40))
                .as("after a segment's long header")
                .isEqualTo(segment);
        assertThat(replayable(cluster, page + 40))
                .as("40 bytes into a page that is not a segment's first: a record's end")
                .isEqualTo(page + 40);
        assertThat(replayable(cluster, page + 32)).isEqualTo(page + 32);
        assertThat(replayable(cluster, page)).isEqualTo(page);
        assertThat(replayable(cluster, segment + PAGE + 24)).isEqualTo(segment + PAGE);
        assertThat(replayable(cluster, page - 8)).isEqualTo(page - 8);
    }

    /**
     * Makes the primary's last record end exactly at a page boundary (a logical message of a computed size, again
     * while other WAL gets in the way), then checks that the standby reaches the position the library takes for
     * the insert position. Without {@link WalPositions#replayable} that position stays 24 bytes ahead of it.
     */
    @Test
    void lastRecordEndingAtAPageBoundary_isReachedByTheStandby(PostgresCluster cluster) throws SQLException {
        final Node standby = cluster.standby(1);
        try (Connection admin = cluster.adminConnection(cluster.primary());
                Statement s = admin.createStatement()) {
            long boundary = -1;
            for (int attempt = 0; attempt < 50 && boundary < 0; attempt++) {
                // A probe of the same header form (a message over 255 bytes) tells the record's size for a length.
                final long beforeProbe = rawInsert(s);
                emit(s, PROBE);
                final long start = rawInsert(s);
                final long probeRecord = start - beforeProbe;
                final long room = PAGE - (start % PAGE);
                final long length = room - probeRecord + PROBE;
                if (length <= 255 + 8) {
                    continue; // too little room left on this page: the probe moves on, try on the next one
                }
                emit(s, length);
                final long after = rawInsert(s);
                if (after % SEGMENT == 40) {
                    boundary = after - 40;
                } else if (after % PAGE == 24) {
                    boundary = after - 24;
                }
            }
            assertThat(boundary).as("the last record ends at a page boundary").isPositive();
            final long taken = WalPositions.insertPosition(admin);
            assertThat(Lsn.format(taken))
                    .as("the position the library takes for it")
                    .isEqualTo(Lsn.format(boundary));
            cluster.awaitReplay(standby, LogSequenceNumber.valueOf(taken), Duration.ofSeconds(30));
        }
    }

    private static final long PROBE = 300;

    private static void emit(Statement s, long length) throws SQLException {
        s.execute("select pg_logical_emit_message(false, 'hibernate-routing-test', repeat('x', " + length + "))");
    }

    private static long rawInsert(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("select pg_current_wal_insert_lsn()::text")) {
            rs.next();
            return Lsn.parse(rs.getString(1));
        }
    }
}
