package io.github.hibernaterouting.routing.internal.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import org.junit.jupiter.api.Test;

/**
 * The order of the standby's answer and the primary's query decides what a comparison proves; each
 * test takes the instants from the clock in the order the health check meets them, never as numbers
 * picked by hand.
 */
class StandbyIdentityTest {
    private static final String SYSTEM = "7000000000000000001";

    /** A primary reading of {@code position}, on timeline 2, whose query was sent at {@code askedAt}. */
    private static PrimaryReading primary(long position, long askedAt, long failedAt) {
        return new PrimaryReading() {
            @Override
            public long position() {
                return position;
            }

            @Override
            public long readAtNanos() {
                return askedAt;
            }

            @Override
            public long askedAtNanos() {
                return askedAt;
            }

            @Override
            public long failedAtNanos() {
                return failedAt;
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

    /** {@link System#nanoTime()} once it has moved past {@code instant}: an event that happens after it. */
    private static long after(long instant) {
        long now = System.nanoTime();
        while (now - instant <= 0) {
            Thread.onSpinWait();
            now = System.nanoTime();
        }
        return now;
    }

    @Test
    void standbyPastAPrimaryReadingAskedAfterItsAnswer_isAhead() {
        final long answered = System.nanoTime();
        final long asked = after(answered);
        assertThat(StandbyIdentity.aheadOfPrimary(false, true, 0x2000, answered, asked, 0x1000))
                .isTrue();
    }

    // The comparison the health check made before: each answer against the reading its lag was measured
    // with, which was asked before the answer. It can never prove anything, so it must not decide.
    @Test
    void standbyPastAPrimaryReadingAskedBeforeItsAnswer_keepsTheEarlierJudgement() {
        final long asked = System.nanoTime();
        final long answered = after(asked);
        // The primary may have written, and the standby replayed, past that reading since it was taken.
        assertThat(StandbyIdentity.aheadOfPrimary(false, true, 0x2000, answered, asked, 0x1000))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, 0x2000, answered, asked, 0x1000))
                .isTrue();
    }

    @Test
    void standbyBehindOrAtAPrimaryReadingAskedAfterIt_isNotAhead() {
        final long answered = System.nanoTime();
        final long asked = after(answered);
        assertThat(StandbyIdentity.aheadOfPrimary(false, true, 0x1000, answered, asked, 0x1000))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(false, true, 0x0800, answered, asked, 0x1000))
                .isFalse();
    }

    @Test
    void standbyOnceProvenAhead_staysAhead_afterThePrimaryWritesPastIt() {
        final long answered = System.nanoTime();
        final long asked = after(answered);
        // Its history differs from the primary's up to its position whatever the primary writes later.
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, 0x2000, answered, asked, 0x3000))
                .isTrue();
    }

    @Test
    void unknownPositions_noReading_orAServerNotInRecovery_areNeverAhead() {
        final long answered = System.nanoTime();
        final long asked = after(answered);
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, Lsn.UNKNOWN, answered, asked, 0x1000))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(true, true, 0x2000, answered, asked, Lsn.UNKNOWN))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(true, false, 0x2000, answered, asked, 0x1000))
                .isFalse();
        assertThat(StandbyIdentity.aheadOfPrimary(false, true, 0x2000, answered, 0, 0x1000))
                .as("never asked")
                .isFalse();
    }

    @Test
    void lagMeasuredBeforeAFailedPrimaryCheck_doesNotCount_oneMeasuredAfterItDoes() {
        final long measured = System.nanoTime();
        final long failed = after(measured);
        final long measuredAgain = after(failed);
        assertThat(primary(0x1000, measured, 0).lagBasis(measured)).isEqualTo(measured);
        assertThat(primary(0x1000, measured, failed).lagBasis(measured))
                .as("measured against the reading from before the failure")
                .isZero();
        assertThat(primary(0x1000, measuredAgain, failed).lagBasis(measuredAgain))
                .isEqualTo(measuredAgain);
        assertThat(primary(0x1000, measured, 0).lagBasis(0)).as("none").isZero();
    }

    @Test
    void problem_namesTheServer_andWhy() {
        final PrimaryReading primary = primary(0x1000, System.nanoTime(), 0);
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
