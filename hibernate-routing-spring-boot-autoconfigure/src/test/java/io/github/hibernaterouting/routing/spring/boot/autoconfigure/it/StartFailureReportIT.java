package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hibernaterouting.testkit.PostgresClusterExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * What a user reads when a hibernate-routing setting stops the start: Spring Boot's failure report
 * leads with the setting, what is wrong with it and the fix, not with the beans it stopped.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartFailureReportIT {
    @RegisterExtension
    static final PostgresClusterExtension CLUSTER = PostgresClusterExtension.withStandbys(1);

    @Test
    void aMisspelledKey_isReportedFirst_withTheSettingItIsClosestTo(CapturedOutput output) throws IOException {
        assertThatThrownBy(
                        () -> TestApplication.start(CLUSTER.cluster(), Map.of("hibernate.routing.stratgy", "PRIMARY")))
                .isNotNull();

        final String report = output.getAll();
        assertThat(report).contains("APPLICATION FAILED TO START");
        final String description = report.substring(report.indexOf("Description:"));
        assertThat(description.lines().filter(line -> !line.isBlank()).skip(1).findFirst())
                .as("the report's first line after 'Description:'")
                .hasValueSatisfying(line ->
                        assertThat(line).contains("hibernate.routing.stratgy").doesNotContain("Error creating bean"));
        assertThat(description.substring(0, description.indexOf("Action:")))
                .contains("did you mean 'hibernate.routing.strategy'?")
                .doesNotContain("hibernateRoutingReadYourWritesFilter", "PRIMARY");
        assertThat(description.substring(description.indexOf("Action:"))).contains("hibernate.routing.stratgy");

        // docs/spring-boot.md shows this report: every line of it is a line of the real one.
        final List<String> doc = Files.readAllLines(Path.of("..", "docs", "spring-boot.md"));
        final int start = doc.indexOf("APPLICATION FAILED TO START");
        assertThat(start).as("the report in docs/spring-boot.md").isPositive();
        final List<String> shown =
                doc.subList(start, doc.subList(start, doc.size()).indexOf("```") + start);
        final List<String> printed = report.lines().map(String::strip).toList();
        assertThat(shown.stream().map(String::strip).filter(line -> !line.isEmpty()))
                .as("docs/spring-boot.md's report")
                .isNotEmpty()
                .allSatisfy(line -> assertThat(printed).contains(line));
    }
}
