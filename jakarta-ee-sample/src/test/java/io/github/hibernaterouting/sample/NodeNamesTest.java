package io.github.hibernaterouting.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.List;
import org.junit.jupiter.api.Test;

class NodeNamesTest {
    @Test
    void fromUrls_namesNodesAsTheLibraryDoes() {
        final NodeNames names = NodeNames.fromUrls(
                "jdbc:postgresql://db:5432/app",
                List.of("jdbc:postgresql://db:5433/app", "jdbc:postgresql://db:5434/app?ssl=true"));
        assertThat(names.nameOf(5432)).isEqualTo("primary");
        assertThat(names.nameOf(5433)).isEqualTo("replica1");
        assertThat(names.nameOf(5434)).isEqualTo("replica2");
    }

    @Test
    void fromUrls_portsThatCannotBeToldApart_showAsPorts() {
        final NodeNames names =
                NodeNames.fromUrls("jdbc:postgresql://primary/app", List.of("jdbc:postgresql://standby/app"));
        assertThat(names.nameOf(5432)).isEqualTo("port 5432");
    }

    @Test
    void fromUrls_badUrl_isRejectedWithoutItsPassword() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> NodeNames.fromUrls("mysql://db/app?password=secret", List.of()))
                .withMessageNotContaining("secret");
    }
}
