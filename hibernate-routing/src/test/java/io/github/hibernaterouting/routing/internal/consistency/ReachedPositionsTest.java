package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ReachedPositionsTest {
    private final AtomicLong healthChecked = new AtomicLong(0x3000);
    private final AtomicLong primary = new AtomicLong(0x3000);
    private final AtomicInteger asked = new AtomicInteger();
    private final AtomicInteger timeline = new AtomicInteger(1);
    private final ReachedPositions reached = new ReachedPositions(healthChecked::get, timeline::get, () -> {
        asked.incrementAndGet();
        return primary.get();
    });

    @Test
    void positionTheHealthCheckAlreadyRead_needsNoQuery() throws SQLException {
        assertThat(reached.reached(0x2fff)).isTrue();
        assertThat(reached.reached(0x3000)).isTrue();
        assertThat(asked).hasValue(0);
    }

    @Test
    void positionAheadOfTheHealthCheck_asksThePrimaryOnce_andRemembersItsAnswer() throws SQLException {
        primary.set(0x5000);
        assertThat(reached.reached(0x4000))
                .as("a write this instance has not seen yet")
                .isTrue();
        assertThat(asked).hasValue(1);
        assertThat(reached.reached(0x4800))
                .as("within the primary's last answer")
                .isTrue();
        assertThat(asked).hasValue(1);
    }

    @Test
    void positionAheadOfThePrimary_isNotReached() throws SQLException {
        assertThat(reached.reached(Long.MAX_VALUE)).isFalse();
        assertThat(reached.reached(0x3001)).isFalse();
        assertThat(asked).as("asked once per check beyond what is known").hasValue(2);
    }

    // An instance that asked the old primary remembered its answer across a failover that lost WAL, and
    // accepted a position the new primary never reached, which a freshly started instance refused.
    @Test
    void answerFromAnotherTimeline_countsForNothing_afterAFailoverThatLostWal() throws SQLException {
        primary.set(0x5000);
        assertThat(reached.reached(0x4800)).isTrue();
        // Failover: the new primary, on timeline 2, never had the old one's last 0x2000 bytes.
        timeline.set(2);
        healthChecked.set(0x3100);
        primary.set(0x3100);
        assertThat(reached.reached(0x4800))
                .as("a position only the old timeline reached")
                .isFalse();
        assertThat(reached.reached(0x3100)).isTrue();
        primary.set(0x5000);
        assertThat(reached.reached(0x4800)).as("once the new primary passes it").isTrue();
    }

    @Test
    void primaryThatCannotBeAsked_isAnError_notAYes() {
        final ReachedPositions down = new ReachedPositions(() -> Lsn.UNKNOWN, () -> 1, () -> {
            throw new SQLException("connection refused");
        });
        assertThatThrownBy(() -> down.reached(0x10)).isInstanceOf(SQLException.class);
    }
}
