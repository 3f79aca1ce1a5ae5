package io.github.hibernaterouting.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/** Operating-system helpers shared by the servers: users, PATH lookup, ports, directories, the polling interval. */
final class Os {
    private Os() {}

    /** True when the effective uid is 0; PostgreSQL refuses to run as root, so we then use a user namespace. */
    static boolean isRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    String[] ids = line.substring(4).trim().split("\\s+");
                    return ids.length > 1 && ids[1].equals("0");
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux (no /proc): fall through to the name check.
        }
        return "root".equals(System.getProperty("user.name"));
    }

    /** The first executable called {@code name} on the PATH. */
    static Optional<Path> which(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** A server program of the system's packages: on the PATH, or in {@code /usr/sbin} (not on every user's PATH). */
    static Optional<Path> systemBinary(String name) {
        return which(name).or(() -> Optional.of(Path.of("/usr/sbin", name)).filter(Files::isExecutable));
    }

    /** Whether something accepts TCP connections on {@code port} of 127.0.0.1. */
    static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Prefixes a command so it runs as a non-root user: as root, in a new user namespace where
     * our uid 0 is mapped to 1000 (files we own appear owned by the process); otherwise unchanged.
     * {@code unshare} execs the command, so the started process is the server itself and can be
     * signalled by pid from outside.
     */
    static List<String> unprivileged(List<String> command) {
        if (!isRoot()) {
            return command;
        }
        Path unshare = which("unshare")
                .orElseThrow(
                        () -> new TestkitException(
                                "Running as root: PostgreSQL refuses to run as root and the test kit runs it in a user namespace"
                                        + " with 'unshare' (util-linux), which is not on the PATH. Install util-linux or run as a non-root user."));
        List<String> wrapped =
                new ArrayList<>(List.of(unshare.toString(), "--user", "--map-user=1000", "--map-group=1000"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Free TCP ports on 127.0.0.1, all distinct (the sockets are held open until all are chosen). */
    static int[] freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                sockets.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("Could not find free ports on 127.0.0.1", e);
        } finally {
            for (ServerSocket socket : sockets) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // Closing a listening socket that never accepted cannot fail meaningfully.
                }
            }
        }
    }

    /** A new private temp directory: under /dev/shm (tmpfs, fast) when usable, else java.io.tmpdir. */
    static Path createTempDir(Path parent, String prefix) {
        try {
            Path base = parent;
            if (base == null) {
                Path shm = Path.of("/dev/shm");
                base = Files.isDirectory(shm) && Files.isWritable(shm)
                        ? shm
                        : Path.of(System.getProperty("java.io.tmpdir"));
            }
            // A short name keeps unix socket paths far below their ~107 byte limit.
            return Files.createTempDirectory(base, prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not create a temp directory", e);
        }
    }

    /** Deletes a directory tree; missing files are fine. */
    static void deleteTree(Path root) throws IOException {
        if (root == null || !Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (NoSuchFileException | UncheckedIOException e) {
            // Deleted concurrently (e.g. by the shutdown hook and an owner's close at once): retry once.
            if (Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                try (Stream<Path> walk = Files.walk(root)) {
                    for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                        Files.deleteIfExists(p);
                    }
                }
            }
        }
    }

    /** The user's cache directory for extracted binaries: ~/.cache/hibernate-routing, else a temp dir. */
    static Path cacheDir() {
        Path home = Path.of(System.getProperty("user.home"), ".cache", "hibernate-routing");
        try {
            Files.createDirectories(home);
            if (Files.isWritable(home)) {
                return home;
            }
        } catch (IOException | RuntimeException e) {
            // Unwritable home (some CI users): fall back below.
        }
        Path tmp =
                Path.of(System.getProperty("java.io.tmpdir"), "hibernate-routing-" + System.getProperty("user.name"));
        try {
            return Files.createDirectories(tmp);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "No writable cache directory for binaries (tried " + home + " and " + tmp + ")", e);
        }
    }

    /**
     * Sleeps the polling interval of every wait on a server: short, so waits end ~2 ms after the
     * condition holds. An interrupt ends the wait with a {@link TestkitException}.
     */
    static void pause() {
        try {
            Thread.sleep(2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TestkitException("Interrupted while waiting");
        }
    }
}
