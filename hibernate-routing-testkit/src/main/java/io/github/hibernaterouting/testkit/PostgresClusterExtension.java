package io.github.hibernaterouting.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension that runs a {@link PostgresCluster} (and optionally a {@link RedisServer}) for a test class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static PostgresClusterExtension cluster = PostgresClusterExtension.withStandbys(2).withRedis();
 *
 * @Test
 * void something(PostgresCluster pg, RedisServer redis) { ... }
 * }</pre>
 *
 * <p>Register it on a <em>static</em> field: the servers start in {@code beforeAll} and are closed
 * in {@code afterAll}, also when tests fail. After each test it heals injected faults so they do
 * not leak into the next test: stopped or killed nodes are started again (primary first), paused
 * replay is resumed and the standbys catch up, and a stopped Redis is restarted. Data is not reset. Test methods (and
 * constructors) may declare {@code PostgresCluster} and {@code RedisServer} parameters. Nested
 * test classes share the outer class's servers.
 *
 * <p>When a test fails, the extension prints each server's state before it heals anything (running, replay paused,
 * WAL positions), keeps the servers' log files under {@code target/server-logs/<test>/} and prints their last lines,
 * so that a failure can be read from the build log alone.
 */
public final class PostgresClusterExtension
        implements BeforeAllCallback, AfterAllCallback, AfterEachCallback, ParameterResolver {
    private final int standbys;
    private boolean redisEnabled;
    private Consumer<PostgresCluster.Builder> customizer = b -> {};
    private PostgresCluster cluster;
    private RedisServer redis;
    private String owner;

    private PostgresClusterExtension(int standbys) {
        this.standbys = standbys;
    }

    /** An extension whose cluster has {@code count} standbys. */
    public static PostgresClusterExtension withStandbys(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("standbys must be >= 0: " + count);
        }
        return new PostgresClusterExtension(count);
    }

    /** Also runs a Redis server. */
    public PostgresClusterExtension withRedis() {
        this.redisEnabled = true;
        return this;
    }

    /** Further builder settings (database, user, binaries, serverSetting…), applied before start. */
    public PostgresClusterExtension configure(Consumer<PostgresCluster.Builder> customizer) {
        this.customizer = this.customizer.andThen(Objects.requireNonNull(customizer, "customizer"));
        return this;
    }

    /**
     * The running cluster.
     *
     * @throws IllegalStateException outside the test class's lifetime
     */
    public PostgresCluster cluster() {
        if (cluster == null) {
            throw new IllegalStateException(
                    "The cluster runs only between beforeAll and afterAll; register the extension on a static field");
        }
        return cluster;
    }

    /**
     * The running Redis server.
     *
     * @throws IllegalStateException if {@link #withRedis()} was not called or outside the class's lifetime
     */
    public RedisServer redis() {
        if (redis == null) {
            throw new IllegalStateException(
                    redisEnabled
                            ? "Redis runs only between beforeAll and afterAll"
                            : "Redis not enabled: use withRedis()");
        }
        return redis;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (cluster != null) {
            return; // a @Nested class: share the outer class's servers
        }
        PostgresCluster.Builder builder = PostgresCluster.builder().standbys(standbys);
        customizer.accept(builder);
        cluster = builder.start();
        owner = context.getUniqueId();
        if (redisEnabled) {
            try {
                redis = RedisServer.start();
            } catch (RuntimeException e) {
                closeAll(e);
                throw e;
            }
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (cluster == null) {
            return;
        }
        if (context.getExecutionException().isPresent()) {
            FailureReport.print(testName(context), cluster, redis);
        }
        if (!cluster.isRunning(cluster.primary())) {
            cluster.start(cluster.primary());
        }
        for (Node standby : cluster.standbys()) {
            if (!cluster.isRunning(standby)) {
                cluster.start(standby);
            }
        }
        cluster.resumeAll();
        // Start the next test with no leftover lag either.
        cluster.awaitCaughtUp(Duration.ofSeconds(60));
        if (redis != null && !redis.isRunning()) {
            redis.restart();
        }
    }

    /** The class and method of a test, and its display name where it says more (a parameterised test's case). */
    private static String testName(ExtensionContext context) {
        final String method =
                context.getTestMethod().map(java.lang.reflect.Method::getName).orElse("");
        final String display = context.getDisplayName();
        return context.getRequiredTestClass().getSimpleName() + "." + method
                + (display.startsWith(method) ? "" : " " + display);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getUniqueId().equals(owner)) {
            if (context.getExecutionException().isPresent() && cluster != null) {
                FailureReport.print(context.getRequiredTestClass().getSimpleName(), cluster, redis);
            }
            closeAll(null);
        }
    }

    private void closeAll(RuntimeException primaryFailure) {
        RuntimeException failure = primaryFailure;
        for (AutoCloseable c : new AutoCloseable[] {redis, cluster}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                if (failure == null) {
                    failure = e instanceof RuntimeException r ? r : new TestkitException("Close failed", e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        redis = null;
        cluster = null;
        owner = null;
        if (failure != null && primaryFailure == null) {
            throw failure;
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        return type == PostgresCluster.class || (type == RedisServer.class && redisEnabled);
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == PostgresCluster.class ? cluster() : redis();
    }
}
