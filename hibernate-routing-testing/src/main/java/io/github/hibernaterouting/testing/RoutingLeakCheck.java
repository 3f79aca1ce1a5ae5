package io.github.hibernaterouting.testing;

import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.RoutingStatus;
import jakarta.persistence.EntityManagerFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.hibernate.SessionFactory;
import org.hibernate.SessionFactoryObserver;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that fails a test which leaks what hibernate-routing hands out:
 *
 * <ul>
 *   <li>a {@link RoutingScope} still open on the test's thread after the test. The check closes it
 *       (innermost first), so that later tests do not run inside it, then fails the test naming it;</li>
 *   <li>a connection still borrowed from one of the library's pools ({@link RoutingStatus.Node#pool()})
 *       of a watched persistence unit: every pool must be back to no active connection within 10 s (system property {@code hibernate.routing.testing.settleSeconds})
 *       after the test (HikariCP returns some connections asynchronously). A persistence unit the
 *       test closes is checked while Hibernate closes it, the last moment its pools exist.</li>
 * </ul>
 *
 * <p>Watched persistence units: those built with {@link RoutingTestSupport#emf} on the test's
 * thread while the check is registered (from the class's {@code @BeforeAll} on), those given to
 * {@link #watch}, and those {@link #watching} suppliers return after each test.
 *
 * <pre>{@code
 * @ExtendWith(RoutingLeakCheck.class)
 * class OrdersIT {
 *     @BeforeEach
 *     void watchTheApplication(RoutingLeakCheck leaks) {
 *         leaks.watch( application.entityManagerFactory() );
 *     }
 * }
 *
 * @RegisterExtension
 * static final RoutingLeakCheck LEAKS = new RoutingLeakCheck().watching( () -> emf );
 * }</pre>
 *
 * <p>Test methods, lifecycle methods and constructors may declare a {@code RoutingLeakCheck}
 * parameter. A leak found when a persistence unit closes in {@code @AfterAll} fails the class.
 */
public final class RoutingLeakCheck
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {
    /** How long each pool may take to get its connections back after a test. */
    private static final long DEFAULT_SETTLE_SECONDS = 10;

    /**
     * The system property that sets how long, in whole seconds, each pool may take to get its connections back
     * (default 10). Generous on purpose: the wait ends as soon as every pool is seen without an active
     * connection, so it costs only a test that leaks, and a busy machine must not turn a late return into a leak.
     */
    public static final String SETTLE_SECONDS_PROPERTY = "hibernate.routing.testing.settleSeconds";

    private static Duration settleTime() {
        return Duration.ofSeconds(Long.getLong(SETTLE_SECONDS_PROPERTY, DEFAULT_SETTLE_SECONDS));
    }

    /** The check running a test class or test on this thread, which {@link RoutingTestSupport#emf} reports to. */
    private static final ThreadLocal<RoutingLeakCheck> ACTIVE = new ThreadLocal<>();

    private final Set<EntityManagerFactory> watched =
            Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
    private final Set<EntityManagerFactory> observed =
            Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
    private final List<Supplier<? extends EntityManagerFactory>> suppliers = new CopyOnWriteArrayList<>();
    /** Leaks found while a watched persistence unit closed, reported after the test (or the class). */
    private final List<String> foundAtClose = new CopyOnWriteArrayList<>();
    /** The routing status of each watched persistence unit that closed during the current test, for a failure's report. */
    private final List<String> statusAtClose = new CopyOnWriteArrayList<>();
    /** How many test classes (a class and its {@code @Nested} classes) the check runs now. */
    private int classDepth;
    /** Set once the check's test class is done: a persistence unit closed later has no test to fail. */
    private volatile boolean finished;

    /** A check that watches the persistence units built with {@link RoutingTestSupport#emf}; see {@link #watch} for others. */
    public RoutingLeakCheck() {}

    /**
     * Watches {@code emf}'s pools after each test from now on, and when it closes.
     *
     * @return {@code emf}
     */
    public <F extends EntityManagerFactory> F watch(F emf) {
        watched.add(emf);
        observeClosing(emf);
        return emf;
    }

    /**
     * Watches the persistence unit {@code factory} returns after each test ({@code null}: none), for
     * one held in a field that {@code @BeforeAll} sets.
     *
     * @return this check
     */
    public RoutingLeakCheck watching(Supplier<? extends EntityManagerFactory> factory) {
        suppliers.add(factory);
        return this;
    }

    /** Watches {@code emf} if a check runs the current test class or test on this thread. */
    static void watchIfActive(EntityManagerFactory emf) {
        final RoutingLeakCheck check = ACTIVE.get();
        if (check != null) {
            check.watch(emf);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        classDepth++;
        finished = false;
        ACTIVE.set(this);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        finished = false;
        statusAtClose.clear();
        ACTIVE.set(this);
        final String open = closeOpenScopes();
        if (open != null) {
            throw new AssertionError("A RoutingScope was already open on thread '"
                    + Thread.currentThread().getName()
                    + "' before the test started (left by a @BeforeAll method or an earlier test class): " + open);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (context.getExecutionException().isPresent()) {
            reportRouting(context.getDisplayName());
        }
        final List<String> leaks = new ArrayList<>();
        final String open = closeOpenScopes();
        if (open != null) {
            leaks.add("The test left a RoutingScope open on thread '"
                    + Thread.currentThread().getName() + "': " + open);
        }
        leaks.addAll(borrowedConnections());
        if (classDepth == 0) {
            // Registered for this test method only: done.
            finished = true;
            if (ACTIVE.get() == this) {
                ACTIVE.remove();
            }
        }
        fail(leaks);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        final List<String> leaks = new ArrayList<>();
        final String open = closeOpenScopes();
        if (open != null) {
            leaks.add("A RoutingScope was left open on thread '"
                    + Thread.currentThread().getName() + "' by a @BeforeAll or @AfterAll method: " + open);
        }
        leaks.addAll(foundAtClose);
        foundAtClose.clear();
        if (--classDepth <= 0) {
            classDepth = 0;
            finished = true;
            watched.clear();
            if (ACTIVE.get() == this) {
                ACTIVE.remove();
            }
        }
        fail(leaks);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == RoutingLeakCheck.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return this;
    }

    private static void fail(List<String> leaks) {
        if (!leaks.isEmpty()) {
            throw new AssertionError(String.join("\n", leaks));
        }
    }

    /**
     * Prints, for a test that failed, which server served what: each watched persistence unit's nodes (up, lag,
     * reads, writes, pool) and its latest routing decisions, newest first, also of those the test closed.
     */
    private void reportRouting(String test) {
        final StringBuilder report = new StringBuilder("== hibernate-routing status after the failed test ")
                .append(test)
                .append('\n');
        final List<EntityManagerFactory> open = new ArrayList<>();
        synchronized (watched) {
            watched.stream().filter(EntityManagerFactory::isOpen).forEach(open::add);
        }
        for (Supplier<? extends EntityManagerFactory> supplier : suppliers) {
            try {
                final EntityManagerFactory emf = supplier.get();
                if (emf != null && emf.isOpen() && open.stream().noneMatch(f -> f == emf)) {
                    open.add(emf);
                }
            } catch (RuntimeException e) {
                report.append("(a watched persistence unit's supplier failed: ")
                        .append(e)
                        .append(")\n");
            }
        }
        open.forEach(emf -> report.append(describe(emf, "open")));
        statusAtClose.forEach(report::append);
        if (open.isEmpty() && statusAtClose.isEmpty()) {
            report.append("(no watched persistence unit with routing on)\n");
        }
        System.out.print(report);
    }

    /** A persistence unit's nodes and latest decisions, or the empty string when routing is off for it. */
    private static String describe(EntityManagerFactory emf, String when) {
        final RoutingStatus status;
        try {
            status = RoutingStatus.of(emf);
        } catch (RuntimeException e) {
            return "persistence unit '" + emf.getName() + "' (" + when + "): status not available: " + e + "\n";
        }
        if (status == null) {
            return "";
        }
        final StringBuilder text = new StringBuilder("persistence unit '")
                .append(emf.getName())
                .append("' (")
                .append(when)
                .append(")\n");
        status.nodes().forEach(node -> text.append("  ").append(node).append('\n'));
        text.append("  latest decisions, newest first:");
        status.decisions().stream()
                .limit(DECISIONS_REPORTED)
                .forEach(d -> text.append(' ').append(d.node()).append('/').append(d.reason()));
        return text.append('\n').toString();
    }

    /** How many of the latest routing decisions a failure's report shows per persistence unit. */
    private static final int DECISIONS_REPORTED = 40;

    /** Closes the scopes open on this thread, innermost first; describes them, or {@code null} if there were none. */
    private static String closeOpenScopes() {
        final List<String> scopes = new ArrayList<>();
        for (RoutingScope scope = RoutingScope.current(); scope != null; scope = RoutingScope.current()) {
            scopes.add("[strategy " + scope.strategy() + ", actor " + scope.actor() + ", written " + scope.hasWritten()
                    + "]");
            try {
                scope.close();
            } catch (RuntimeException e) {
                scopes.add("(could not close it: " + e.getMessage() + ")");
                break;
            }
        }
        if (scopes.isEmpty()) {
            return null;
        }
        return scopes.size() + " scope(s), innermost first: " + String.join(", ", scopes)
                + ". The check closed them so that later tests do not run inside them. Close every scope on the thread that"
                + " opened it, e.g. try (RoutingScope scope = RoutingScope.open(...)) { ... }";
    }

    /** The leaks of every watched persistence unit that is open, and of those that closed during the test. */
    private List<String> borrowedConnections() {
        final List<EntityManagerFactory> factories = new ArrayList<>();
        synchronized (watched) {
            watched.removeIf(emf -> !emf.isOpen());
            factories.addAll(watched);
        }
        for (Supplier<? extends EntityManagerFactory> supplier : suppliers) {
            final EntityManagerFactory emf = supplier.get();
            if (emf != null && emf.isOpen() && factories.stream().noneMatch(f -> f == emf)) {
                observeClosing(emf);
                factories.add(emf);
            }
        }
        final List<String> leaks = new ArrayList<>(foundAtClose);
        foundAtClose.clear();
        for (EntityManagerFactory emf : factories) {
            final String borrowed = stillBorrowed(emf);
            if (borrowed != null) {
                leaks.add("Connections still borrowed from hibernate-routing's pools "
                        + settleTime().toSeconds() + " s after the test, in persistence unit '" + emf.getName() + "': "
                        + borrowed + ". " + HINT);
            }
        }
        return leaks;
    }

    private static final String HINT =
            "Close every EntityManager the test opened (try-with-resources), and end its transaction;"
                    + " a connection stays borrowed while its unit of work lasts.";

    /** Checks {@code emf}'s pools once more when Hibernate starts closing it, while they still exist. */
    private void observeClosing(EntityManagerFactory emf) {
        if (observed.add(emf)) {
            emf.unwrap(SessionFactoryImplementor.class).addObserver(new ClosingCheck(this, emf));
        }
    }

    private static final class ClosingCheck implements SessionFactoryObserver {
        private static final long serialVersionUID = 1L;

        private final transient RoutingLeakCheck check;
        private final transient EntityManagerFactory emf;

        ClosingCheck(RoutingLeakCheck check, EntityManagerFactory emf) {
            this.check = check;
            this.emf = emf;
        }

        @Override
        public void sessionFactoryClosing(SessionFactory factory) {
            if (check == null || check.finished) {
                return;
            }
            check.statusAtClose.add(describe(emf, "when it closed"));
            final String borrowed = stillBorrowed(emf);
            if (borrowed != null) {
                check.foundAtClose.add(
                        "Connections still borrowed from hibernate-routing's pools when persistence unit '"
                                + emf.getName() + "' was closed (waited "
                                + settleTime().toSeconds() + " s): " + borrowed
                                + ". " + HINT);
            }
            check.observed.remove(emf);
        }
    }

    /**
     * Waits up to {@link #settleTime()} for every pool of {@code emf} to be seen without an active
     * connection; describes the pools that never were, or {@code null} when all were (or routing is
     * off for {@code emf}, or the library does not own its pools).
     */
    private static String stillBorrowed(EntityManagerFactory emf) {
        final long deadline = System.nanoTime() + settleTime().toNanos();
        final Set<String> returned = new HashSet<>();
        while (true) {
            final RoutingStatus status = RoutingStatus.of(emf);
            if (status == null) {
                return null;
            }
            final List<String> borrowed = new ArrayList<>();
            for (RoutingStatus.Node node : status.nodes()) {
                final RoutingStatus.Pool pool = node.pool();
                if (pool == null || pool.active() == 0) {
                    returned.add(node.name());
                } else if (!returned.contains(node.name())) {
                    borrowed.add(node.name() + " " + pool.active() + " active (" + pool.idle() + " idle, maximum "
                            + pool.maximum() + ")");
                }
            }
            if (borrowed.isEmpty()) {
                return null;
            }
            if (System.nanoTime() > deadline) {
                return String.join(", ", borrowed);
            }
            RoutingTestSupport.sleep(5);
        }
    }
}
