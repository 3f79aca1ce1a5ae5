package io.github.hibernaterouting.testkit;

import java.util.concurrent.CountDownLatch;

/**
 * Starts a primary with two hot standbys (and Redis with {@code --redis}) and waits for Ctrl-C.
 *
 * <p>Options: {@code --redis}, {@code --standbys=N}. Binaries follow {@link Binaries#PROPERTY}.
 * A shutdown hook stops every server and removes the temp directories.
 */
public final class ClusterDemo {
    private ClusterDemo() {}

    /** Entry point; see the class comment for options. */
    public static void main(String[] args) throws InterruptedException {
        boolean withRedis = false;
        int standbys = 2;
        for (String arg : args) {
            if (arg.equals("--redis")) {
                withRedis = true;
            } else if (arg.startsWith("--standbys=")) {
                standbys = Integer.parseInt(arg.substring("--standbys=".length()));
            } else {
                System.err.println("usage: ClusterDemo [--redis] [--standbys=N]");
                System.exit(2);
            }
        }
        PostgresCluster cluster = PostgresCluster.builder().standbys(standbys).start();
        RedisServer redis = withRedis ? RedisServer.start() : null;
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                if (redis != null) {
                                    redis.close();
                                }
                                cluster.close();
                                System.out.println("Stopped all servers.");
                            } finally {
                                closed.countDown();
                            }
                        },
                        "cluster-demo-shutdown"));

        // The password is the test kit's documented default (docs/testing.md); secrets are never printed.
        System.out.printf(
                "PostgreSQL cluster up in %d ms (user %s, database %s):%n",
                cluster.startupMillis(), cluster.user(), cluster.database());
        for (Node node : cluster.nodes()) {
            System.out.printf("  %-9s %s   log: %s%n", node.name(), node.jdbcUrl(), node.logFile());
        }
        if (redis != null) {
            System.out.println("  redis     " + redis.uri());
        }
        System.out.println("Press Ctrl-C to stop.");
        closed.await();
    }
}
