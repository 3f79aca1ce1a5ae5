package io.github.hibernaterouting.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a failed test leaves behind for whoever reads the build log: each server's state (running, paused, WAL
 * positions) at the moment of the failure, before the extension heals anything, the servers' log files copied out
 * of the temporary directory that {@link PostgresCluster#close()} deletes, and the tail of each.
 *
 * <p>The copies go to {@code target/server-logs/<test>/} below the working directory (a Maven module's directory
 * under Surefire and Failsafe), or below the directory the system property
 * {@code hibernate.routing.testkit.failureLogs} names.
 */
final class FailureReport {
    /** The system property naming where a failed test's server logs are kept. */
    static final String DIRECTORY_PROPERTY = "hibernate.routing.testkit.failureLogs";

    private static final int TAIL_LINES = 30;

    private FailureReport() {}

    /** Prints the report for {@code test} to standard output; never throws. */
    static void print(String test, PostgresCluster cluster, RedisServer redis) {
        final StringBuilder report = new StringBuilder("== servers after the failed test ")
                .append(test)
                .append('\n');
        final Path kept = keptDirectory(test);
        final List<Path> logs = new ArrayList<>();
        if (cluster != null) {
            report.append(describe(cluster));
            for (Node node : cluster.nodes()) {
                if (node.logFile() != null) {
                    logs.add(node.logFile());
                }
            }
        }
        if (redis != null) {
            report.append("redis     port ")
                    .append(redis.port())
                    .append(redis.isRunning() ? " running" : " NOT running")
                    .append('\n');
            logs.add(redis.logFile());
        }
        for (Path log : logs) {
            report.append(copy(log, kept));
        }
        for (Path log : logs) {
            report.append(tail(log));
        }
        System.out.print(report);
        System.out.flush();
    }

    private static String describe(PostgresCluster cluster) {
        final StringBuilder text = new StringBuilder();
        String primaryLsn;
        try {
            primaryLsn = String.valueOf(cluster.currentWalLsn());
        } catch (RuntimeException e) {
            primaryLsn = "unknown (" + e.getMessage() + ")";
        }
        for (Node node : cluster.nodes()) {
            text.append(String.format("%-9s port %d", node.name(), node.port()));
            boolean running;
            try {
                running = cluster.isRunning(node);
            } catch (RuntimeException e) {
                running = true; // an external server: ask it
            }
            if (!running) {
                text.append(" NOT running\n");
                continue;
            }
            if (node.isPrimary()) {
                text.append(" primary, current WAL ").append(primaryLsn).append('\n');
                continue;
            }
            try {
                text.append(" replay ")
                        .append(cluster.isReplayPaused(node) ? "PAUSED" : "running")
                        .append(", replayed ")
                        .append(cluster.replayLsn(node))
                        .append(", received ")
                        .append(cluster.receiveLsn(node))
                        .append('\n');
            } catch (RuntimeException e) {
                text.append(" state unknown: ").append(e.getMessage()).append('\n');
            }
        }
        return text.toString();
    }

    private static Path keptDirectory(String test) {
        final String base = System.getProperty(DIRECTORY_PROPERTY, "target/server-logs");
        return Path.of(base, test.replaceAll("[^A-Za-z0-9._-]+", "_")).toAbsolutePath();
    }

    private static String copy(Path log, Path directory) {
        try {
            if (!Files.exists(log)) {
                return "log " + log + " does not exist\n";
            }
            Files.createDirectories(directory);
            final Path target = directory.resolve(log.getFileName());
            Files.copy(log, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            return "log kept: " + target + '\n';
        } catch (IOException | RuntimeException e) {
            return "log " + log + " could not be kept: " + e + '\n';
        }
    }

    private static String tail(Path log) {
        try {
            if (!Files.exists(log)) {
                return "";
            }
            final List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            final StringBuilder text =
                    new StringBuilder("-- last lines of ").append(log).append('\n');
            lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size())
                    .forEach(line -> text.append("   ").append(line).append('\n'));
            return text.toString();
        } catch (IOException | RuntimeException e) {
            return "-- " + log + " could not be read: " + e + '\n';
        }
    }
}
