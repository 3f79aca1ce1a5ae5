package io.github.hibernaterouting.benchmarks.workload;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OverheadBenchmarkTest {

    @Test
    void medianInterval_usesTheBinomialOrderStatistics() {
        // Ranks from the binomial tables for a two-sided 95 % interval of the median.
        assertThat(Statistics.medianIntervalRank(5)).isZero();
        assertThat(Statistics.medianIntervalRank(6)).isEqualTo(1);
        assertThat(Statistics.medianIntervalRank(8)).isEqualTo(1);
        assertThat(Statistics.medianIntervalRank(9)).isEqualTo(2);
        assertThat(Statistics.medianIntervalRank(20)).isEqualTo(6);
        assertThat(Statistics.medianIntervalRank(60)).isEqualTo(22);
    }

    @Test
    void medianInterval_printsTheTwoOrderStatistics() {
        final double[] sorted = {0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98};
        assertThat(Statistics.medianInterval(sorted)).isEqualTo("0.910–0.970");
        assertThat(Statistics.medianInterval(new double[] {1, 2, 3})).startsWith("n/a");
    }
}
