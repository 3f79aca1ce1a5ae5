package io.github.hibernaterouting.benchmarks;

import io.github.hibernaterouting.routing.sql.SqlClassifier;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import net.sf.jsqlparser.JSQLParserException;
import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.Select;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Cost per statement of deciding "may this run on a replica?" over a realistic mix of Hibernate 7
 * generated SQL: the classifier without and with its memo, the naive {@code startsWith("SELECT")}
 * check, and JSqlParser as used by the AWS JDBC wrapper's read/write splitting.
 *
 * <p>Each invocation classifies the whole mix; scores are per statement.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ClassifierBenchmark {

    static final List<String> STATEMENTS = HibernateStatements.ALL;
    private static final int N = 50;

    private String[] sql;
    private SqlClassifier memoised;
    private SqlClassifier uncached;
    private ExecutorService parserExecutor;

    @Setup(Level.Trial)
    public void setUp() {
        if (STATEMENTS.size() != N) {
            throw new IllegalStateException(
                    "OperationsPerInvocation assumes " + N + " statements, got " + STATEMENTS.size());
        }
        sql = STATEMENTS.toArray(new String[0]);
        uncached = SqlClassifier.builtIn();
        memoised = SqlClassifier.builtIn();
        for (String s : sql) {
            memoised.classify(s); // warm the memo: the steady state of an application
        }
        parserExecutor = Executors.newSingleThreadExecutor();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        parserExecutor.shutdownNow();
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void classifierUncached(Blackhole bh) {
        for (String s : sql) {
            bh.consume(uncached.classifyUncached(s).replicaSafe());
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void classifierMemoised(Blackhole bh) {
        for (String s : sql) {
            bh.consume(memoised.classify(s).replicaSafe());
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void startsWithSelectBaseline(Blackhole bh) {
        for (String s : sql) {
            bh.consume(startsWithSelect(s));
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public void jsqlParser(Blackhole bh) {
        for (String s : sql) {
            bh.consume(jsqlParserReadOnly(s));
        }
    }

    /**
     * JSqlParser with one reused executor: {@code CCJSqlParserUtil.parse(String)} starts and stops a
     * thread per call (it parses under a timeout), which this variant avoids, to separate the
     * parser's own cost from that overhead.
     */
    @Benchmark
    @OperationsPerInvocation(N)
    public void jsqlParserSharedExecutor(Blackhole bh) {
        for (String s : sql) {
            bh.consume(jsqlParserReadOnly(s, parserExecutor));
        }
    }

    /** The naive check: strip leading whitespace and comments, then look for SELECT. */
    static boolean startsWithSelect(String s) {
        int i = 0;
        int n = s.length();
        while (i < n) {
            if (Character.isWhitespace(s.charAt(i))) {
                i++;
            } else if (s.startsWith("--", i)) {
                int eol = s.indexOf('\n', i);
                i = eol < 0 ? n : eol + 1;
            } else if (s.startsWith("/*", i)) {
                int end = s.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
            } else {
                break;
            }
        }
        return s.regionMatches(true, i, "select", 0, 6);
    }

    /** Read-only per JSqlParser: a SELECT without a locking clause; unparseable counts as a write. */
    static boolean jsqlParserReadOnly(String s) {
        return jsqlParserReadOnly(s, null);
    }

    private static boolean jsqlParserReadOnly(String s, ExecutorService executor) {
        try {
            Statement st = executor == null ? CCJSqlParserUtil.parse(s) : CCJSqlParserUtil.parse(s, executor, p -> {});
            if (!(st instanceof Select select)) {
                return false;
            }
            return !(select instanceof PlainSelect ps) || ps.getForMode() == null;
        } catch (JSQLParserException e) {
            return false;
        }
    }

    /** Prints each approach's verdict per statement, to check the mix before timing it. */
    public static void main(String[] args) {
        SqlClassifier c = SqlClassifier.builtIn();
        for (String s : STATEMENTS) {
            System.out.printf(
                    Locale.ROOT,
                    "%-40s %-8s %-8s %s%n",
                    c.classify(s),
                    startsWithSelect(s) ? "REPLICA" : "PRIMARY",
                    jsqlParserReadOnly(s) ? "REPLICA" : "PRIMARY",
                    s.length() > 70 ? s.substring(0, 70) + "…" : s);
        }
    }
}
