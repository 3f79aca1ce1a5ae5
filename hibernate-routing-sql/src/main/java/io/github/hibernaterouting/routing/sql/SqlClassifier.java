package io.github.hibernaterouting.routing.sql;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.hibernaterouting.routing.sql.internal.SqlLexer;
import io.github.hibernaterouting.routing.sql.internal.Tokens;
import java.util.Objects;

/**
 * Decides whether a PostgreSQL statement is proven read-only and may therefore run on a hot
 * standby; anything it cannot prove goes to the primary.
 *
 * <p>It tokenizes the SQL once ({@link SqlLexer}: comments, quoted identifiers, all string and
 * dollar-quoted literal forms) and then walks the tokens with parenthesis depth: the statement
 * kind comes from the first keyword; queries are searched at every depth for data-modifying
 * CTEs, locking clauses, {@code SELECT … INTO} and function calls, which are judged by built-in
 * knowledge generated from {@code pg_proc} ({@link BuiltinFunctions}) and the optional
 * {@link FunctionCatalog}. Several statements separated by {@code ;} are replica-safe only if
 * each one is. JDBC escapes are read as pgjdbc rewrites them: a <code>{fn name(…)}</code> it passes
 * through is judged like any call, <code>{call …}</code> is a {@link Reason#CALL}.
 *
 * <p>Session and transaction statements: {@code SET}, {@code RESET}, {@code SET ROLE},
 * {@code PREPARE} of a read-only statement, cursors over read-only queries, {@code BEGIN},
 * {@code COMMIT}, savepoints are classified replica-safe ({@link Reason#SESSION_STATE},
 * {@link Reason#TRANSACTION_CONTROL}) because a standby runs them without writing anything, and
 * sending a {@code SET LOCAL statement_timeout} to the primary would needlessly pull a whole
 * read-only unit of work off the replica. The price is that such state belongs to the connection
 * that ran it: a router that later moves the unit of work to another connection must carry it over;
 * {@link Classification#settingScope()} tells which statements to carry, and for how long, and
 * {@link Classification#control()} which statements begin or end a transaction or open, use or
 * close a cursor ({@link Classification#cursorName()}). Transactions a standby refuses
 * (serializable, read-write, two-phase commit) go to the primary, and so does {@code DISCARD}
 * ({@link Reason#SESSION_RESET}), which would reset a replica connection's read-only default.
 * {@code EXECUTE} of a prepared statement goes to the primary, since its text is not visible here.
 *
 * <p>Some read-only statements write depending on session state: {@code current_schema()} creates
 * the temporary schema when {@code pg_temp} comes first in {@code search_path}. They stay
 * replica-safe but say so ({@link Classification#dependsOnSearchPath()}), for a router to send them
 * to the primary once its unit of work has changed {@code search_path}. A statement that creates a
 * temporary table, view or sequence says so ({@link Classification#createsTemporaryObject()}): the
 * object exists only on the connection that created it, so a router keeps the unit's reads there. Likewise a router must keep
 * a unit that ran {@code SET}/{@code RESET standard_conforming_strings} or {@code RESET ALL}
 * ({@link Classification#detail()} names the parameter, {@code all} for {@code RESET ALL}) away from
 * replicas afterwards, since the lexer assumes the setting is on.
 *
 * <p>Known limits: a read-only statement can still reach a writing function indirectly, through a
 * view, a user-defined operator, a domain's CHECK constraint or a type's input function; the
 * classifier sees only the text. A function called in attribute notation ({@code t.f} for
 * {@code f(t)}) is recognised only with a {@link FunctionCatalog} that knows a one-argument
 * {@code f} (and then a column named like such a function keeps its query on the primary); without
 * a catalog nothing tells {@code t.f} from a column, so it is read as one. SQL is assumed to run
 * with {@code standard_conforming_strings = on}. The control and cursor name of a script of
 * several statements are not reported ({@link Classification.Control#NONE}).
 *
 * <p>Thread-safe. {@link #classify} memoises verdicts per SQL string in a bounded cache, so the
 * repeated statements of an ORM cost one hash lookup and no allocation.
 */
public final class SqlClassifier {

    private static final Classification EMPTY = Classification.of(Reason.EMPTY);
    private static final Classification UNPARSEABLE = Classification.of(Reason.UNPARSEABLE);

    /** Slots of {@link #recent}; a power of two. */
    private static final int RECENT_SLOTS = 256;

    private final StatementClassifier statements;
    private final Cache<String, Classification> memo;
    /**
     * In front of the memo: the last verdict per slot, found by the SQL string's identity. Hibernate
     * sends the same string instance for the same statement, so most lookups end here without
     * hashing or the memo's bookkeeping. Entries are immutable; racing writers only overwrite each
     * other. {@code null} when memoising is off.
     */
    private final Recent[] recent;

    private record Recent(String sql, Classification verdict) {}

    /**
     * A classifier that also consults {@code catalog} for functions it does not know, memoising at
     * most {@code maximumCacheSize} distinct SQL strings (0 disables the memo).
     */
    public SqlClassifier(FunctionCatalog catalog, long maximumCacheSize) {
        if (maximumCacheSize < 0) {
            throw new IllegalArgumentException("maximumCacheSize must be >= 0, was " + maximumCacheSize);
        }
        this.statements =
                new StatementClassifier(Objects.requireNonNull(catalog, "catalog (use FunctionCatalog.NONE for none)"));
        this.memo = Caffeine.newBuilder().maximumSize(maximumCacheSize).build();
        this.recent = maximumCacheSize == 0 ? null : new Recent[RECENT_SLOTS];
    }

    /** A classifier with built-in knowledge only and a memo of 10,000 statements. */
    public static SqlClassifier builtIn() {
        return new SqlClassifier(FunctionCatalog.NONE, 10_000);
    }

    /** The memoised verdict for {@code sql}; never throws, null or blank SQL is {@link Reason#EMPTY}. */
    public Classification classify(String sql) {
        if (sql == null) {
            return EMPTY;
        }
        final int slot = System.identityHashCode(sql) & (RECENT_SLOTS - 1);
        if (recent != null) {
            final Recent hit = recent[slot];
            if (hit != null && hit.sql() == sql) {
                return hit.verdict();
            }
        }
        Classification c = memo.getIfPresent(sql);
        if (c == null) {
            c = classifyUncached(sql);
            memo.put(sql, c);
        }
        if (recent != null) {
            recent[slot] = new Recent(sql, c);
        }
        return c;
    }

    /** The verdict for {@code sql} computed afresh; never throws. */
    public Classification classifyUncached(String sql) {
        if (sql == null) {
            return EMPTY;
        }
        Tokens t;
        try {
            t = SqlLexer.tokenize(sql);
        } catch (RuntimeException | StackOverflowError e) {
            return UNPARSEABLE;
        }
        Classification c;
        try {
            c = t.error != null ? Classification.of(Reason.UNPARSEABLE, t.error) : statements.classifyScript(t);
            if (!c.replicaSafe() && t.error == null && TemporaryObjects.created(t)) {
                c = c.withTemporaryObject();
            }
        } catch (RuntimeException | StackOverflowError e) {
            c = UNPARSEABLE; // a bug here must never route a write to a replica
        }
        return c.withRoutingHint(t.routingHint);
    }
}
