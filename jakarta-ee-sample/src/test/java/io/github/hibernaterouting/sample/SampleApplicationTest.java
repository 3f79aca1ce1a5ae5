package io.github.hibernaterouting.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.net.URI;
import org.junit.jupiter.api.Test;

class SampleApplicationTest {
    @Test
    void port_argumentWinsOverEnvironment_andDefaultsTo8080() {
        assertThat(SampleApplication.port(new String[0], null)).isEqualTo(8080);
        assertThat(SampleApplication.port(new String[0], "9090")).isEqualTo(9090);
        assertThat(SampleApplication.port(new String[] {"--port=0"}, "9090")).isZero();
    }

    @Test
    void port_badValueOrUnknownArgument_isRejected() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> SampleApplication.port(new String[] {"--port=http"}, null))
                .withMessageContaining("'http'");
        assertThatIllegalArgumentException().isThrownBy(() -> SampleApplication.port(new String[0], "70000"));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> SampleApplication.port(new String[] {"--verbose"}, null))
                .withMessageContaining("--port=N");
    }

    @Test
    void walkthrough_postsThenReadsTheNewNoteWithTheSameKey() {
        assertThat(SampleApplication.walkthrough(URI.create("http://127.0.0.1:8080/")))
                .satisfiesExactly(
                        post -> assertThat(post)
                                .startsWith("id=$(curl -si -X POST http://127.0.0.1:8080/api/notes")
                                .contains("Bearer demo-alice"),
                        read -> assertThat(read)
                                .isEqualTo(
                                        "curl -i http://127.0.0.1:8080/api/notes/$id -H 'Authorization: Bearer demo-alice'"),
                        list -> assertThat(list)
                                .isEqualTo(
                                        "curl -i http://127.0.0.1:8080/api/notes -H 'Authorization: Bearer demo-alice'"));
    }
}
