package io.github.hibernaterouting.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class CsvReaderTest {

    @Test
    void parsesHeaderAndRows() {
        assertThat(CsvReader.parse("query,calls\nselect 1,5\n"))
                .containsExactly(List.of("query", "calls"), List.of("select 1", "5"));
    }

    @Test
    void quotedFieldsWithCommasQuotesAndLineBreaks() {
        String csv = "userid,query,calls\r\n10,\"select a, b\nfrom t where s = \"\"x\"\"\",42\r\n11,\"\",0";
        assertThat(CsvReader.parse(csv))
                .containsExactly(
                        List.of("userid", "query", "calls"),
                        List.of("10", "select a, b\nfrom t where s = \"x\"", "42"),
                        List.of("11", "", "0"));
    }

    @Test
    void emptyFieldsAndByteOrderMark() {
        assertThat(CsvReader.parse("\uFEFFa,b,c\n,,\n")).containsExactly(List.of("a", "b", "c"), List.of("", "", ""));
    }

    @Test
    void unterminatedQuote_isAnError() {
        assertThatThrownBy(() -> CsvReader.parse("query,calls\n\"select 1,3\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unterminated");
    }
}
