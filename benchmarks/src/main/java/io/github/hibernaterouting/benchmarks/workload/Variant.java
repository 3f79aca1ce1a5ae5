package io.github.hibernaterouting.benchmarks.workload;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One variant of {@link OverheadBenchmark}: an {@link OverheadWorker} in its own warm JVM, and this
 * side of its stdin/stdout protocol. The name starts with the variant's letter ({@code "B routing"}).
 */
record Variant(String name, Process process, BufferedReader out, PrintWriter in) {
    /**
     * Starts a worker JVM with {@code arguments} on {@code classPath}, under {@code taskset -c pin}
     * unless {@code pin} is null, recording to {@code jfr} unless null; returns once it is READY.
     */
    static Variant start(String name, String classPath, String[] arguments, String jfr, String pin) throws IOException {
        final List<String> command = new ArrayList<>();
        if (pin != null) {
            command.addAll(List.of("taskset", "-c", pin));
        }
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xms512m");
        command.add("-Xmx512m");
        // More JVM options for the workers, e.g. a profiler agent: BENCH_JVM_ARGS="-agentpath:..."
        final String jvmArgs = System.getenv("BENCH_JVM_ARGS");
        if (jvmArgs != null && !jvmArgs.isBlank()) {
            command.addAll(Arrays.asList(jvmArgs.trim().split("\\s+")));
        }
        if (jfr != null) {
            Files.createDirectories(Path.of(jfr));
            command.add("-XX:FlightRecorderOptions:stackdepth=256");
            command.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                    + Path.of(jfr)
                            .resolve(name.replaceAll("[^A-Za-z+]+", "-") + ".jfr")
                            .toAbsolutePath());
        }
        command.add("-cp");
        command.add(classPath);
        command.add(OverheadWorker.class.getName());
        command.addAll(Arrays.asList(arguments));
        final Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        final Variant variant = new Variant(
                name,
                process,
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)),
                new PrintWriter(process.getOutputStream(), false, StandardCharsets.UTF_8));
        variant.await("READY");
        return variant;
    }

    /** The variant's letter, the first of its name: what the tables' ratio and CPU columns are headed with. */
    String letter() {
        return name.substring(0, 1);
    }

    /** Runs the workload; returns {ops/s, JVM CPU µs per op}. */
    double[] run(int threads, int seconds) throws IOException {
        final String[] result = runRaw(threads, seconds);
        final long ops = Long.parseLong(result[1]);
        final long errors = Long.parseLong(result[4]);
        if (errors > 0) {
            System.err.println(name + ": " + errors + " failed operations");
        }
        return new double[] {ops / (Long.parseLong(result[5]) / 1e9), Long.parseLong(result[6]) / 1e3 / ops};
    }

    /** Runs the workload; returns the worker's RESULT line, split. */
    String[] runRaw(int threads, int seconds) throws IOException {
        in.println("run " + threads + " " + seconds * 1000L);
        in.flush();
        return await("RESULT").split(" ");
    }

    String await(String prefix) throws IOException {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.startsWith(prefix)) {
                return line;
            }
            System.err.println(name + "> " + line);
        }
        throw new IOException(name + " ended");
    }

    void quit() throws InterruptedException {
        in.println("quit");
        in.flush();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroy();
        }
    }
}
