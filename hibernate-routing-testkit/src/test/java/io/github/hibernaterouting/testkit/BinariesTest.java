package io.github.hibernaterouting.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BinariesTest {
    @AfterEach
    void clearProperty() {
        System.clearProperty(Binaries.PROPERTY);
    }

    @Test
    void parse_acceptsMavenSystemAndPaths() {
        assertThat(Binaries.parse("maven")).isSameAs(Binaries.MAVEN);
        assertThat(Binaries.parse(" SYSTEM ")).isSameAs(Binaries.SYSTEM);
        assertThat(Binaries.parse("/opt/pg/bin")).isEqualTo(Binaries.directory(Path.of("/opt/pg/bin")));
        assertThat(Binaries.parse("/opt/pg/bin").directory()).isEqualTo(Path.of("/opt/pg/bin"));
    }

    @Test
    void parse_rejectsBlank() {
        assertThatThrownBy(() -> Binaries.parse(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maven, system");
    }

    @Test
    void fromEnvironment_prefersSystemProperty() {
        System.setProperty(Binaries.PROPERTY, "system");
        assertThat(Binaries.fromEnvironment()).isSameAs(Binaries.SYSTEM);
    }

    @Test
    void missingBinaries_failWithPathAndHowToChoose() {
        assertThatThrownBy(() -> PgBinaries.binDir(Binaries.directory(Path.of("/nonexistent/pg/bin"))))
                .isInstanceOf(TestkitException.class)
                .hasMessageContaining("/nonexistent/pg/bin/initdb")
                .hasMessageContaining(Binaries.PROPERTY);
    }
}
