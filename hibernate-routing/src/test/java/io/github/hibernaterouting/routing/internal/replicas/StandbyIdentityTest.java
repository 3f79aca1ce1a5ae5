package io.github.hibernaterouting.routing.internal.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import org.junit.jupiter.api.Test;

class StandbyIdentityTest {
    private static final String SYSTEM = "7000000000000000001";

    /** A primary reading of {@code position}, taken at {@code readAt}, on timeline 2. */
    private static PrimaryReading primary(long position, long readAt) {
        return new PrimaryReading() {
            @Override
            public long position() {
                return position;
            }

            @Override
            public long readAtNanos() {
                return readAt;
            }

            @Override
            public long freshPosition() {
                return position;
            }

            @Override
            public String systemIdentifier() {
                return SYSTEM;
            }

            @Override
            public int timeline() {
                return 2;
            }
        };
    }

    @Test
    void standbyAheadOfAPrimaryReadingTakenAfterIt_isAhead() {
        assertThat(StandbyIdentity.aheadOfPrimary(false, true, 0x2000, 100, primary(0x1000, 200)))
                .isTrue();
    }

    @Test
    void standbyAheadOfAPrimaryReadingTakenBeforeIt_keepsTheEarlierJudgement() {
        // The primary may have written past the standby since: an older reading proves nothing.
        assertThat(StandbyIdentity.aheadOfPrimary(false, true, 0x2000, 300, primary(0x1000, 200)))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, 0x2000, 300, primary(0x1000, 200)))
                .isTrue();
    }

    @Test
    void standbyBehindOrAtThePrimary_isNotAhead_andClearsAnEarlierJudgement() {
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, 0x1000, 100, primary(0x1000, 200)))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, 0x0800, 100, primary(0x1000, 200)))
                .isFalse();
    }

    @Test
    void unknownPositions_orAServerNotInRecovery_areNeverAhead() {
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, Lsn.UNKNOWN, 100, primary(0x1000, 200)))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, 0x2000, 100, primary(Lsn.UNKNOWN, 0)))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(true, false, 0x2000, 100, primary(0x1000, 200)))
                .isFalse();
    }

    @Test
    void problem_namesTheServer_andWhy() {
        final PrimaryReading primary = primary(0x1000, 200);
        assertThat(StandbyIdentity.problem("replica1(jdbc:postgresql://s1/app)", SYSTEM, 2, true, false, primary))
                .isNull();
        assertThat(StandbyIdentity.problem("replica1(x)", "7000000000000000002", 2, true, false, primary))
                .contains("replica1(x)")
                .contains("another cluster");
        assertThat(StandbyIdentity.problem("replica1(x)", SYSTEM, 1, true, false, primary))
                .contains("timeline 1, the primary on timeline 2");
        // A promoted server writes on its own timeline; not being in recovery is judged elsewhere.
        assertThat(StandbyIdentity.problem("replica1(x)", SYSTEM, 3, false, false, primary))
                .isNull();
        assertThat(StandbyIdentity.problem("replica1(x)", SYSTEM, 2, true, true, primary))
                .contains("replayed WAL past the primary's position");
    }
}
