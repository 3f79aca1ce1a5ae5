package io.github.hibernaterouting.it.suite;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sample application in its own JVM: {@code java} of this JVM's {@code java.home}, the sample's
 * main class with {@code --port=0}, the servers passed in the environment the way an operator would
 * ({@code SAMPLE_PRIMARY_URL}, {@code HIBERNATE_ROUTING_REPLICA_URLS}, …), stdout and stderr in a log
 * file. Started when the log shows "The sample runs at http://127.0.0.1:PORT/".
 */
final class SampleProcess implements AutoCloseable {
    static final String MAIN_CLASS = "io.github.hibernaterouting.sample.SampleApplication";
    private static final Pattern RUNS_AT = Pattern.compile("The sample runs at (http://127\\.0\\.0\\.1:\\d+/)");

    final String name;
    final Path log;
    private final Process process;
    private URI uri;

    private SampleProcess(String name, Path log, Process process) {
        this.name = name;
        this.log = log;
        this.process = process;
    }

    /**
     * Starts the process and waits for its "runs at" line.
     *
     * @throws IllegalStateException with the log's tail if it exits or does not come up within {@code timeout}
     */
    static SampleProcess start(
            String name, String classpath, Path webapp, Map<String, String> env, Path log, Duration timeout)
            throws IOException, InterruptedException {
        return start(name, classpath, webapp, env, List.of(), log, timeout);
    }

    /**
     * The same, with more JVM options, for example persistence-unit settings as system properties
     * ({@code -Dhibernate.routing.primary.maximum_pool_size=5}: Hibernate reads system properties too).
     */
    static SampleProcess start(
            String name,
            String classpath,
            Path webapp,
            Map<String, String> env,
            List<String> jvmOptions,
            Path log,
            Duration timeout)
            throws IOException, InterruptedException {
        Files.createDirectories(log.getParent());
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx384m");
        command.add("-XX:TieredStopAtLevel=1");
        command.addAll(jvmOptions);
        command.add("-Dsample.webapp=" + webapp);
        command.add("-cp");
        command.add(classpath);
        command.add(MAIN_CLASS);
        command.add("--port=0");
        final ProcessBuilder builder = new ProcessBuilder(command)
                .directory(webapp.getParent().getParent().getParent().toFile()) // the sample module
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().remove("SAMPLE_PORT");
        builder.environment().putAll(env);
        final SampleProcess sample = new SampleProcess(name, log, builder.start());
        try {
            sample.awaitStarted(timeout);
        } catch (IOException | InterruptedException | RuntimeException e) {
            sample.close();
            throw e;
        }
        return sample;
    }

    private void awaitStarted(Duration timeout) throws IOException, InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            final String output = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
            final Matcher m = RUNS_AT.matcher(output);
            if (m.find()) {
                uri = URI.create(m.group(1));
                return;
            }
            if (!process.isAlive()) {
                throw new IllegalStateException("Sample process " + name + " exited with " + process.exitValue()
                        + " before it printed 'The sample runs at'; log " + log + ", last lines:\n" + tail(output));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Sample process " + name + " did not print 'The sample runs at' within "
                        + timeout.toSeconds() + " s; log " + log + ", last lines:\n" + tail(output));
            }
            Thread.sleep(100);
        }
    }

    private static String tail(String output) {
        final String[] lines = output.split("\n");
        final int from = Math.max(0, lines.length - 25);
        return String.join("\n", java.util.Arrays.copyOfRange(lines, from, lines.length));
    }

    URI uri() {
        return uri;
    }

    long pid() {
        return process.pid();
    }

    /** SIGTERM (the sample's shutdown hook stops Jetty and the persistence unit), SIGKILL after 20 s. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
