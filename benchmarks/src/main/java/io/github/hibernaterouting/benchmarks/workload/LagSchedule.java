package io.github.hibernaterouting.benchmarks.workload;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The replication lag {@link OffloadBenchmark} injects: for each scenario, when replay on which
 * standbys is paused and resumed, in milliseconds from the start of a policy's run.
 */
final class LagSchedule {
    private LagSchedule() {}

    /** One step of the lag schedule: at {@code atMillis}, pause (or resume) replay on these standbys. */
    record Fault(long atMillis, boolean pause, int... standbys) {}

    /** The faults of {@code --scenario short}, {@code long} or {@code steady} (none), in time order. */
    static List<Fault> forScenario(String scenario) {
        return switch (scenario) {
            case "short" ->
                List.of(
                        new Fault(2_000, true, 1), new Fault(5_000, false, 1),
                        new Fault(8_000, true, 1, 2), new Fault(9_500, false, 1, 2),
                        new Fault(12_000, true, 2), new Fault(15_000, false, 2),
                        new Fault(18_000, true, 1, 2), new Fault(19_500, false, 1, 2),
                        new Fault(22_000, true, 1), new Fault(25_000, false, 1),
                        new Fault(28_000, true, 1, 2), new Fault(29_500, false, 1, 2),
                        new Fault(32_000, true, 2), new Fault(35_000, false, 2));
            case "long" ->
                List.of(
                        new Fault(5_000, true, 1, 2), new Fault(20_000, false, 1, 2),
                        new Fault(26_000, true, 1, 2), new Fault(41_000, false, 1, 2));
            // No lag at all, as long as short: what routing costs when every standby keeps up.
            case "steady" -> List.of(new Fault(35_000, false));
            default -> throw new IllegalArgumentException("scenario: short, long or steady, not " + scenario);
        };
    }

    /** The schedule as the first line of the output gives it: {@code pause [1, 2]@5.0s, resume [1, 2]@20.0s, …}. */
    static String describe(List<Fault> faults) {
        if (faults.stream().allMatch(f -> f.standbys().length == 0)) {
            return "none";
        }
        return faults.stream()
                .map(f -> (f.pause() ? "pause " : "resume ") + Arrays.toString(f.standbys()) + "@"
                        + f.atMillis() / 1000.0 + "s")
                .collect(Collectors.joining(", "));
    }
}
