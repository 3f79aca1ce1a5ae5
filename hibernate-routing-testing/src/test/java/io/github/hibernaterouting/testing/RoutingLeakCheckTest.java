package io.github.hibernaterouting.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedSuccessfully;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.RoutingScope;
import io.github.hibernaterouting.routing.Strategy;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * {@link RoutingLeakCheck} fails a test that leaves a {@link RoutingScope} open, closes the scope
 * so that the next test does not run inside it, and lets tests that close their scopes pass. The
 * test classes below leak on purpose; they run only inside {@link EngineTestKit}.
 */
class RoutingLeakCheckTest {
    private static volatile boolean inEngineTestKit;

    static boolean inEngineTestKit() {
        return inEngineTestKit;
    }

    private static EngineExecutionResults run(Class<?> testClass) {
        inEngineTestKit = true;
        try {
            return EngineTestKit.engine("junit-jupiter")
                    .selectors(selectClass(testClass))
                    .execute();
        } finally {
            inEngineTestKit = false;
        }
    }

    @Test
    void aTestThatLeavesAScopeOpen_fails_andTheNextTestRunsWithoutIt() {
        final EngineExecutionResults events = run(LeavesAScopeOpen.class);

        events.testEvents().assertStatistics(stats -> stats.started(2).failed(1).succeeded(1));
        events.testEvents()
                .assertThatEvents()
                .haveExactly(
                        1,
                        event(
                                test("opensNestedScopesAndForgetsThem"),
                                finishedWithFailure(
                                        instanceOf(AssertionError.class),
                                        message(m -> m.contains("The test left a RoutingScope open on thread")
                                                && m.contains(
                                                        "2 scope(s), innermost first: [strategy PRIMARY, actor forgetful")
                                                && m.contains("[strategy null, actor null")))))
                .haveExactly(1, event(test("runsWithoutTheLeakedScopes"), finishedSuccessfully()));
        assertThat(RoutingScope.current()).as("nothing left on this thread").isNull();
    }

    @Test
    void aScopeLeftOpenBeforeTheTests_failsTheTestNamingWhereItCameFrom() {
        final EngineExecutionResults events = run(OpensAScopeInBeforeAll.class);

        events.testEvents()
                .assertThatEvents()
                .haveExactly(
                        1,
                        event(
                                test("runsAfterTheLeakyBeforeAll"),
                                finishedWithFailure(message(m -> m.contains("already open")
                                        && m.contains("before the test started")
                                        && m.contains("actor setup")))));
        assertThat(RoutingScope.current()).isNull();
    }

    @Test
    void testsThatCloseTheirScopes_pass() {
        final EngineExecutionResults events = run(ClosesItsScopes.class);

        events.allEvents().assertStatistics(stats -> stats.failed(0));
        events.testEvents().assertStatistics(stats -> stats.succeeded(2));
    }

    @ExtendWith(RoutingLeakCheck.class)
    @EnabledIf("io.github.hibernaterouting.testing.RoutingLeakCheckTest#inEngineTestKit")
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class LeavesAScopeOpen {
        @Test
        @Order(1)
        void opensNestedScopesAndForgetsThem() {
            RoutingScope.open(null);
            RoutingScope.builder().strategy(Strategy.PRIMARY).actor("forgetful").open();
        }

        @Test
        @Order(2)
        void runsWithoutTheLeakedScopes() {
            assertThat(RoutingScope.current()).isNull();
        }
    }

    @ExtendWith(RoutingLeakCheck.class)
    @EnabledIf("io.github.hibernaterouting.testing.RoutingLeakCheckTest#inEngineTestKit")
    static class OpensAScopeInBeforeAll {
        @BeforeAll
        static void openAScope() {
            RoutingScope.builder().actor("setup").open();
        }

        @Test
        void runsAfterTheLeakyBeforeAll() {}
    }

    @ExtendWith(RoutingLeakCheck.class)
    @EnabledIf("io.github.hibernaterouting.testing.RoutingLeakCheckTest#inEngineTestKit")
    static class ClosesItsScopes {
        @Test
        void tryWithResources() {
            try (RoutingScope outer = RoutingScope.open(Strategy.STALE_READ);
                    RoutingScope inner = RoutingScope.builder().actor("tidy").open()) {
                assertThat(RoutingScope.current()).isSameAs(inner);
            }
        }

        @Test
        void lambdaForm() {
            assertThat(Routing.with(
                            Strategy.PRIMARY, () -> RoutingScope.current().strategy()))
                    .isEqualTo(Strategy.PRIMARY);
        }
    }
}
