package io.github.hibernaterouting.benchmarks.workload;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code --pin} of {@link OverheadBenchmark} and {@link SplitControl}: the server's processes on
 * the last CPU, the load generators on the others, as if they ran on separate machines.
 */
final class CpuPinning {
    private CpuPinning() {}

    /** Moves every {@code postgres} process to the last CPU; new backends fork from the postmaster and inherit it. */
    static void pinServer(int cpus) throws IOException {
        for (String process : ServerAccounting.serverCpuTicks().keySet()) {
            taskset("-a", "-p", "-c", String.valueOf(cpus - 1), process.substring(0, process.indexOf(' ')));
        }
    }

    /** The CPUs left to the load generators, as a {@code taskset -c} list; fails on a machine with fewer than 2. */
    static String requireCpus(int cpus) {
        if (cpus < 2) {
            throw new IllegalArgumentException(
                    "--pin needs at least 2 CPUs (one for the server, the rest for the workers); this machine has "
                            + cpus);
        }
        return cpus == 2 ? "0" : "0-" + (cpus - 2);
    }

    /** Runs {@code taskset} with these arguments; fails unless it exits with 0. */
    static void taskset(String... arguments) throws IOException {
        final List<String> command = new ArrayList<>(List.of("taskset"));
        command.addAll(Arrays.asList(arguments));
        final Process process = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            if (process.waitFor() != 0) {
                throw new IOException(String.join(" ", command) + " failed with exit code " + process.exitValue());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", command), e);
        }
    }
}
