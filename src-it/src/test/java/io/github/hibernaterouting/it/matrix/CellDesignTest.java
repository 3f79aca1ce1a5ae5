package io.github.hibernaterouting.it.matrix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The matrix's cells cover every pair of factor levels, and name each cell once. */
class CellDesignTest {
    private static final List<List<? extends Enum<?>>> FACTORS = List.of(
            List.of(Cell.Cache.values()),
            List.of(Cell.Stamps.values()),
            List.of(Cell.Reads.values()),
            List.of(Cell.Failure.values()),
            List.of(Cell.Isolation.values()),
            List.of(Cell.Pools.values()),
            List.of(Cell.Endpoint.values()));

    private static List<Enum<?>> levels(Cell cell) {
        return List.of(
                cell.cache(),
                cell.stamps(),
                cell.reads(),
                cell.failure(),
                cell.isolation(),
                cell.pools(),
                cell.endpoint());
    }

    @Test
    void everyPairOfFactorLevels_isInSomeCell() {
        final List<String> missing = new ArrayList<>();
        for (int i = 0; i < FACTORS.size(); i++) {
            for (int j = i + 1; j < FACTORS.size(); j++) {
                for (Enum<?> a : FACTORS.get(i)) {
                    for (Enum<?> b : FACTORS.get(j)) {
                        final int fi = i;
                        final int fj = j;
                        final boolean covered = Cell.DESIGN.stream()
                                .map(CellDesignTest::levels)
                                .anyMatch(levels -> levels.get(fi) == a && levels.get(fj) == b);
                        if (!covered) {
                            missing.add(a + " with " + b);
                        }
                    }
                }
            }
        }
        assertThat(missing).as("pairs of levels no cell has").isEmpty();
    }

    @Test
    void cellsHaveDistinctNames_andDistinctFactors() {
        final Set<String> names = new HashSet<>();
        final Set<List<Enum<?>>> configurations = new HashSet<>();
        for (Cell cell : Cell.DESIGN) {
            assertThat(names.add(cell.id())).as(cell.id()).isTrue();
            assertThat(configurations.add(levels(cell))).as(cell.describe()).isTrue();
        }
        assertThat(Cell.named("c3")).isEqualTo(Cell.DESIGN.get(2));
    }
}
