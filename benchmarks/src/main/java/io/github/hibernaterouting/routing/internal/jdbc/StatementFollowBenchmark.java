package io.github.hibernaterouting.routing.internal.jdbc;

import java.sql.ResultSet;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What a statement prepared on a replica costs for following its unit of work
 * ({@link RoutedStatement}), on a statement that does nothing itself, so that only the library's
 * share is timed. In the package of the class it measures, which is package-private.
 *
 * <ul>
 * <li>{@code raw}: two parameters and an execution on the driver's statement, as before.</li>
 * <li>{@code preparedOnceExecutedOnce}: the same through a new wrapper, as every replica read now
 * does: the wrapper, the parameter record, and the generation check.</li>
 * <li>{@code executedAgain}: one more execution of a wrapped statement whose unit did not move.</li>
 * </ul>
 *
 * <pre>
 * java -cp … org.openjdk.jmh.Main StatementFollowBenchmark -f 1 -wi 5 -w 1s -i 5 -r 1s -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class StatementFollowBenchmark {
    private static final String SQL = "select i1_0.id,i1_0.name from item i1_0 where i1_0.id=? and i1_0.kind=?";

    /** A driver statement that does nothing. */
    static final class NoOpStatement extends ForwardingPreparedStatement {
        NoOpStatement() {
            super(null);
        }

        @Override
        public void setLong(int parameterIndex, long value) {}

        @Override
        public void setString(int parameterIndex, String value) {}

        @Override
        public ResultSet executeQuery() {
            return null;
        }

        @Override
        public void close() {}
    }

    private final NoOpStatement driver = new NoOpStatement();
    private final PhysicalConnections physicals = new PhysicalConnections(null, null, null, 0, null, null);
    private RoutedStatement reused;
    private long id;

    @Setup
    public void setUp() {
        reused = wrap();
    }

    private RoutedStatement wrap() {
        return new RoutedStatement(
                driver,
                null,
                null,
                physicals,
                null,
                SQL,
                RoutedStatement.NONE,
                RoutedStatement.NONE,
                RoutedStatement.NONE,
                RoutedStatement.NONE,
                null,
                null,
                null);
    }

    @Benchmark
    public ResultSet raw() throws Exception {
        driver.setLong(1, ++id);
        driver.setString(2, "book");
        return driver.executeQuery();
    }

    @Benchmark
    public ResultSet preparedOnceExecutedOnce() throws Exception {
        final RoutedStatement statement = wrap();
        statement.setLong(1, ++id);
        statement.setString(2, "book");
        return statement.executeQuery();
    }

    @Benchmark
    public ResultSet executedAgain() throws Exception {
        reused.setLong(1, ++id);
        reused.setString(2, "book");
        return reused.executeQuery();
    }
}
