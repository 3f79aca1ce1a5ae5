package io.github.hibernaterouting.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A JVM that is terminated without closing its servers must not leave processes or directories behind. */
class ShutdownHookIT {
    @Test
    @Timeout(120)
    void abortedJvm_shutdownHookStopsServersAndDeletesTempDirs() throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(
                        java.toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        AbandonedClusterMain.class.getName())
                .redirectErrorStream(true)
                .start();
        Path workDir = null;
        Path redisDir = null;
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while (redisDir == null && (line = out.readLine()) != null) {
                if (line.startsWith("WORKDIR ")) {
                    workDir = Path.of(line.substring(8));
                } else if (line.startsWith("REDISDIR ")) {
                    redisDir = Path.of(line.substring(9));
                } else {
                    System.out.println("child: " + line);
                }
            }
            assertThat(workDir).as("child started a cluster").isNotNull();
            assertThat(redisDir).as("child started redis").isNotNull();
            assertThat(ProcScan.processesUsing(workDir)).isNotEmpty();

            child.destroy(); // SIGTERM, like an aborted build
            assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            child.destroyForcibly();
        }
        for (Path dir : List.of(workDir, redisDir)) {
            assertThat(ProcScan.processesUsing(dir))
                    .as("processes using " + dir)
                    .isEmpty();
            assertThat(dir).doesNotExist();
        }
    }
}
