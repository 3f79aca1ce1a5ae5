package io.github.hibernaterouting.testkit;

/** Starts a cluster and a Redis and never closes them: only the JVM shutdown hook can clean up. */
final class AbandonedClusterMain {
    private AbandonedClusterMain() {}

    public static void main(String[] args) throws InterruptedException {
        PostgresCluster pg = PostgresCluster.builder().standbys(1).start();
        RedisServer redis = RedisServer.start();
        System.out.println("WORKDIR " + pg.workDir());
        System.out.println("REDISDIR " + redis.workDir());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
