package io.github.hibernaterouting.routing.internal.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatelessReadsTest {
    @Test
    void findsATableAsAWord_inAnyCase_qualifiedOrQuoted() {
        final StatelessReads reads = new StatelessReads();
        reads.ran("select n1_0.id,n1_0.text from Note n1_0 where n1_0.id=?");
        assertThat(reads.readOne(List.of("Account", "note"))).isEqualTo("note");
        assertThat(reads.readOne(List.of("app.\"Note\""))).isEqualTo("app.\"Note\"");
        final StatelessReads quoted = new StatelessReads();
        quoted.ran("select * from \"app\".\"note\" where id = 1");
        assertThat(quoted.readOne(List.of("note"))).isEqualTo("note");
    }

    @Test
    void aNameInsideAnotherIdentifier_isNotARead() {
        final StatelessReads reads = new StatelessReads();
        reads.ran("select n.note_id, n.notes, $note, footnote from other n");
        assertThat(reads.readOne(List.of("note"))).isNull();
        assertThat(reads.readOne(List.of("other"))).isEqualTo("other");
    }

    @Test
    void nothingRead_nothingFound() {
        assertThat(new StatelessReads().readOne(List.of("note"))).isNull();
    }

    @Test
    void pastTheLimit_everyTableCountsAsRead() {
        final StatelessReads reads = new StatelessReads();
        for (int i = 0; i <= StatelessReads.LIMIT; i++) {
            reads.ran("select " + i + " from other");
        }
        assertThat(reads.readOne(List.of("note"))).isEqualTo("note");
    }
}
