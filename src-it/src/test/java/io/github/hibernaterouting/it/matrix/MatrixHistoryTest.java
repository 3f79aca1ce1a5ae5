package io.github.hibernaterouting.it.matrix;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.it.matrix.MatrixHistory.ErrorKind;
import io.github.hibernaterouting.it.matrix.MatrixHistory.FinalState;
import io.github.hibernaterouting.it.matrix.MatrixHistory.Kind;
import io.github.hibernaterouting.it.matrix.MatrixHistory.Op;
import io.github.hibernaterouting.it.matrix.MatrixHistory.Outcome;
import io.github.hibernaterouting.it.matrix.MatrixHistory.Violation;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The checker on histories made up for each property: it reports what breaks it, and nothing that does not. */
class MatrixHistoryTest {
    private static long units;

    private static Op op(Kind kind, String object, long value, long start, long end) {
        return new Op(
                0,
                "actor-0",
                kind,
                ++units,
                object,
                value,
                -1,
                -1,
                "standby1",
                "find",
                start,
                end,
                Outcome.OK,
                null,
                null);
    }

    private static Op inUnit(long unit, long value, long start) {
        return new Op(
                1,
                "actor-0",
                Kind.READ_UNIT,
                unit,
                "counter:5",
                value,
                -1,
                -1,
                "standby2",
                "find",
                start,
                start + 1,
                Outcome.OK,
                null,
                null);
    }

    private static Op failed(Kind kind, String object, Outcome outcome, ErrorKind error) {
        return new Op(0, "actor-0", kind, ++units, object, -1, -1, -1, null, null, 1, 2, outcome, error, "boom");
    }

    private static List<String> kinds(MatrixHistory history, FinalState end, boolean repeatableRead) {
        return history.check(end, repeatableRead).stream().map(Violation::kind).toList();
    }

    private static FinalState values(Map<String, Long> values) {
        return new FinalState(values, List.of());
    }

    @Test
    void readOfTheActorsRow_olderThanAnAcknowledgedWrite_isAReadYourWritesViolation() {
        final MatrixHistory history = new MatrixHistory();
        history.record(op(Kind.WRITE_OWN, "counter:0", 1, 10, 20));
        history.record(op(Kind.READ_OWN, "counter:0", 0, 15, 16)); // concurrent with the write: either is fine
        history.record(op(Kind.READ_STALE, "counter:0", 0, 30, 31)); // STALE_READ: not checked
        assertThat(kinds(history, values(Map.of("counter:0", 1L)), false)).isEmpty();

        history.record(op(Kind.READ_OWN, "counter:0", 0, 21, 22));
        assertThat(kinds(history, values(Map.of("counter:0", 1L)), false)).containsExactly("read-your-writes");
    }

    @Test
    void unitOfWorkThatReadsBackInTime_isAMonotonicReadsViolation() {
        final MatrixHistory history = new MatrixHistory();
        history.record(inUnit(100, 5, 1));
        history.record(inUnit(100, 7, 2));
        history.record(inUnit(101, 3, 3)); // another unit may read older data
        assertThat(kinds(history, values(Map.of()), false)).isEmpty();

        history.record(inUnit(100, 6, 4));
        assertThat(kinds(history, values(Map.of()), false)).containsExactly("monotonic-reads");
    }

    @Test
    void finalValue_mustBeTheAcknowledgedIncrements_plusAtMostTheUnknownOnes() {
        final MatrixHistory history = new MatrixHistory();
        history.record(op(Kind.INCREMENT, "shared", 1, 1, 2));
        history.record(op(Kind.INCREMENT, "shared", 2, 3, 4));
        history.record(failed(Kind.INCREMENT, "shared", Outcome.UNKNOWN, ErrorKind.CONNECTION));
        history.record(failed(Kind.INCREMENT, "shared", Outcome.FAILED, ErrorKind.OPTIMISTIC));
        assertThat(kinds(history, values(Map.of("shared", 2L)), false)).isEmpty();
        assertThat(kinds(history, values(Map.of("shared", 3L)), false)).isEmpty();
        assertThat(kinds(history, values(Map.of("shared", 1L)), false)).containsExactly("lost-increment");
        assertThat(kinds(history, values(Map.of("shared", 4L)), false)).containsExactly("lost-increment");
        assertThat(kinds(history, values(Map.of("shared", 2L, "versioned", 1L)), false))
                .as("a counter that moved without any increment")
                .containsExactly("lost-increment");
    }

    @Test
    void valueAcknowledgedTwice_isADuplicate() {
        final MatrixHistory history = new MatrixHistory();
        history.record(op(Kind.INCREMENT, "versioned", 1, 1, 2));
        history.record(op(Kind.INCREMENT, "versioned", 1, 3, 4));
        assertThat(kinds(history, values(Map.of("versioned", 2L)), false)).containsExactly("duplicate");
    }

    @Test
    void acknowledgedAddMissing_orFailedAddPresent_isALostCollectionAdd_andTwiceIsADuplicate() {
        final MatrixHistory history = new MatrixHistory();
        history.record(op(Kind.ADD, "a", 1, 1, 2));
        history.record(op(Kind.ADD, "b", 2, 3, 4));
        history.record(failed(Kind.ADD, "c", Outcome.FAILED, ErrorKind.OPTIMISTIC));
        history.record(failed(Kind.ADD, "d", Outcome.UNKNOWN, ErrorKind.CONNECTION));
        assertThat(kinds(history, new FinalState(Map.of(), List.of("a", "b", "d")), false))
                .isEmpty();
        assertThat(kinds(history, new FinalState(Map.of(), List.of("a", "d")), false))
                .containsExactly("lost-collection-add");
        assertThat(kinds(history, new FinalState(Map.of(), List.of("a", "b", "c")), false))
                .containsExactly("lost-collection-add");
        assertThat(kinds(history, new FinalState(Map.of(), List.of("a", "b", "b")), false))
                .containsExactly("duplicate");
    }

    @Test
    void repeatableReadTransaction_thatSawTwoSnapshots_isASnapshotViolation_onlyAtRepeatableRead() {
        final MatrixHistory history = new MatrixHistory();
        history.record(new Op(
                0,
                "actor-0",
                Kind.SNAPSHOT,
                1,
                "snapshot:1",
                1,
                0,
                0,
                "standby1",
                "native",
                1,
                2,
                Outcome.OK,
                null,
                null));
        history.record(new Op(
                0,
                "actor-0",
                Kind.SNAPSHOT,
                2,
                "snapshot:1",
                3,
                1,
                1,
                "standby1",
                "native",
                3,
                4,
                Outcome.OK,
                null,
                null));
        assertThat(kinds(history, values(Map.of("snapshot:1", 2L)), false))
                .as("a jump is fine at READ COMMITTED")
                .isEmpty();
        assertThat(kinds(history, values(Map.of("snapshot:1", 2L)), true)).containsExactly("snapshot");
    }

    @Test
    void errors_conflictsAndRefusalsAreExpectedOfMutationsOnly_connectionFailuresOfAll() {
        final MatrixHistory history = new MatrixHistory();
        history.record(failed(Kind.READ_OWN, "counter:0", Outcome.FAILED, ErrorKind.CONNECTION));
        history.record(failed(Kind.WRITE_OWN, "counter:0", Outcome.FAILED, ErrorKind.MARKER));
        history.record(failed(Kind.INCREMENT, "shared", Outcome.FAILED, ErrorKind.SERIALIZATION));
        assertThat(kinds(history, values(Map.of()), true)).isEmpty();

        history.record(failed(Kind.READ_UNIT, "counter:1", Outcome.FAILED, ErrorKind.OPTIMISTIC));
        history.record(failed(Kind.SNAPSHOT, "snapshot:1", Outcome.UNKNOWN, ErrorKind.OTHER));
        assertThat(kinds(history, values(Map.of("snapshot:1", 0L)), true))
                .containsExactly("unexpected-error", "unexpected-error");
    }
}
