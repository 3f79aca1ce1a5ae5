package io.github.hibernaterouting.benchmarks.workload;

import java.util.Arrays;
import java.util.Locale;

/** The summaries {@link OverheadBenchmark} prints under its rounds: means, medians and the median's confidence interval. */
final class Statistics {
    private Statistics() {}

    static double mean(double[][] values, int column) {
        return Arrays.stream(values).mapToDouble(row -> row[column]).average().orElse(Double.NaN);
    }

    static double median(double[] sorted) {
        return sorted.length % 2 == 1
                ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    /**
     * A distribution-free 95 % confidence interval for the median of {@code sorted}: the order
     * statistics {@code x(k)} and {@code x(n+1-k)} for the largest {@code k} with
     * {@code P(Binomial(n, 1/2) < k) <= 0.025}. Rounds are paired and alternate their order, but the
     * machine's noise is neither normal nor symmetric, hence no t-interval.
     */
    static String medianInterval(double[] sorted) {
        final int k = medianIntervalRank(sorted.length);
        return k == 0
                ? "n/a (needs 6 rounds)"
                : String.format(Locale.ROOT, "%.3f–%.3f", sorted[k - 1], sorted[sorted.length - k]);
    }

    /** The rank {@code k} of {@link #medianInterval}, 0 if no such interval exists for {@code n} rounds. */
    static int medianIntervalRank(int n) {
        double below = 0;
        double term = Math.pow(0.5, n);
        int k = 0;
        for (int i = 0; i < n; i++) {
            below += term;
            if (below > 0.025) {
                break;
            }
            k = i + 1;
            term = term * (n - i) / (i + 1);
        }
        return k;
    }
}
