package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * JDKs on this machine other than the one the build runs on: for tests whose server or application
 * needs a newer Java than the build's 17 (Payara Micro 7, virtual threads).
 */
public final class Jdks {
    private static final Path JVMS = Path.of("/usr/lib/jvm");

    private Jdks() {}

    /**
     * The home of a JDK of {@code minimumFeature} or later: this JVM's if it is one, else the newest under
     * {@code /usr/lib/jvm}; empty if there is none.
     */
    public static Optional<Path> atLeast(int minimumFeature) {
        if (Runtime.version().feature() >= minimumFeature) {
            return Optional.of(Path.of(System.getProperty("java.home")));
        }
        if (!Files.isDirectory(JVMS)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(JVMS)) {
            return homes.filter(home -> Files.isExecutable(home.resolve("bin/java")))
                    .filter(home -> feature(home) >= minimumFeature)
                    .max(Comparator.comparingInt(Jdks::feature));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The feature version a JDK's {@code release} file gives, or 0. */
    static int feature(Path home) {
        try (Stream<String> lines = Files.lines(home.resolve("release"))) {
            return lines.filter(line -> line.startsWith("JAVA_VERSION="))
                    .map(line -> line.substring("JAVA_VERSION=".length()).replace("\"", ""))
                    .map(version -> Integer.parseInt(version.split("[.+-]")[0]))
                    .findFirst()
                    .orElse(0);
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }
}
