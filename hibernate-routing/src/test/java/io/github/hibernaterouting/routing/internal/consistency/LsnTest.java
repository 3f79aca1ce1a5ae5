package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LsnTest {
    @Test
    void parseAndFormat_roundTrip() {
        assertThat(Lsn.format(Lsn.parse("16/B374D848"))).isEqualTo("16/B374D848");
        assertThat(Lsn.parse("0/3000060")).isEqualTo(0x3000060L);
        assertThat(Lsn.parse("1/0")).isEqualTo(1L << 32);
    }

    @Test
    void comparison_isUnsigned() {
        final long high = Lsn.parse("FFFFFFFF/FFFFFFFF");
        assertThat(high).isNegative();
        assertThat(Lsn.reached(high, Lsn.parse("0/1"))).isTrue();
        assertThat(Lsn.reached(Lsn.parse("0/1"), high)).isFalse();
        assertThat(Lsn.max(high, 5)).isEqualTo(high);
        assertThat(Lsn.distance(Lsn.parse("0/10"), Lsn.parse("0/30"))).isEqualTo(0x20);
        assertThat(Lsn.distance(Lsn.parse("0/30"), Lsn.parse("0/10"))).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/", "12", "G/1", "1/", "/1", "123456789/0"})
    void parse_rejectsWhatIsNotAPosition(String text) {
        assertThatThrownBy(() -> Lsn.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("WAL position");
    }
}
