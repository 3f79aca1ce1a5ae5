package io.github.hibernaterouting.benchmarks.workload;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One side of {@link OverheadBenchmark}, in its own JVM: builds one persistence unit and runs the
 * JPA workload whenever the parent says so on stdin.
 *
 * <p>Protocol, one line each: the parent sends {@code run <threads> <millis>}, the worker answers
 * {@code RESULT <ops> <reads> <writes> <errors> <elapsedNanos> <processCpuNanos> <workerCpuNanos>}; {@code quit} ends it. The worker
 * prints {@code READY} once the persistence unit is built.
 *
 * <p>Arguments: {@code plain <primaryUrl> <user> <password> <pool>}, {@code split <primaryUrl> <user>
 * <password> <pool> <replicaUrl>}, or {@code routing <primaryUrl> <user> <password> <pool>
 * <replicaUrl> <checkRecovery>}. {@code plain} and {@code split} must run without hibernate-routing
 * on the class path. {@code split} is plain Hibernate with the read/write split written by hand: a
 * second persistence unit on {@code replicaUrl} (a read-only pool) serves the reads, the first one
 * the transactions.
 *
 * <p>The workload, per operation: 60 % {@code find} of a random item, 30 % a JPQL range query of
 * 10 items, 10 % a transaction that loads an item, increments its versioned quantity and inserts
 * an {@link ItemEvent}. Each operation uses its own EntityManager, as a request would.
 */
public final class OverheadWorker {
    static final int ITEMS = 10_000;

    private OverheadWorker() {}

    public static void main(String[] args) throws Exception {
        final String variant = args[0];
        final PersistenceConfiguration configuration = unit("overhead-" + variant, args[1], args);
        final String pool = args[4];
        PersistenceConfiguration readers = null;
        if (variant.equals("plain") || variant.equals("split")) {
            hikari(configuration, pool);
            if (variant.equals("split")) {
                readers = hikari(unit("overhead-split-reads", args[5], args), pool)
                        .property("hibernate.hikari.readOnly", "true");
            }
        } else {
            // Literal keys: RoutingSettings constants would be inlined anyway; kept literal so the
            // plain JVM never needs the library's classes.
            configuration
                    .property("hibernate.routing.replica_urls", args[5])
                    .property("hibernate.routing.check_recovery", args[6])
                    .property("hibernate.routing.primary.maximum_pool_size", pool)
                    .property("hibernate.routing.primary.minimum_idle", pool)
                    .property("hibernate.routing.replica.maximum_pool_size", pool)
                    .property("hibernate.routing.replica.minimum_idle", pool);
            // Extra routing settings for experiments, e.g.
            // BENCH_ROUTING_SETTINGS=hibernate.routing.transactions=PRIMARY
            final String extra = System.getenv("BENCH_ROUTING_SETTINGS");
            if (extra != null && !extra.isBlank()) {
                for (String setting : extra.split(",")) {
                    final String[] keyValue = setting.split("=", 2);
                    configuration.property(keyValue[0].trim(), keyValue[1].trim());
                }
            }
        }
        try (EntityManagerFactory emf = configuration.createEntityManagerFactory();
                EntityManagerFactory readEmf = readers == null ? emf : readers.createEntityManagerFactory();
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            System.out.println("READY");
            System.out.flush();
            for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
                final String[] command = line.trim().split("\\s+");
                if (command[0].equals("run")) {
                    System.out.println(run(readEmf, emf, Integer.parseInt(command[1]), Long.parseLong(command[2])));
                    System.out.flush();
                }
            }
        }
    }

    private static PersistenceConfiguration unit(String name, String url, String[] args) {
        return new PersistenceConfiguration(name)
                .managedClass(Item.class)
                .managedClass(ItemEvent.class)
                .property(PersistenceConfiguration.JDBC_URL, url)
                .property(PersistenceConfiguration.JDBC_USER, args[2])
                .property(PersistenceConfiguration.JDBC_PASSWORD, args[3])
                .property("hibernate.hbm2ddl.auto", "none");
    }

    private static PersistenceConfiguration hikari(PersistenceConfiguration configuration, String pool) {
        return configuration
                .property(
                        "hibernate.connection.provider_class",
                        "org.hibernate.hikaricp.internal.HikariCPConnectionProvider")
                .property("hibernate.hikari.maximumPoolSize", pool)
                .property("hibernate.hikari.minimumIdle", pool);
    }

    private static String run(EntityManagerFactory readEmf, EntityManagerFactory emf, int threads, long millis)
            throws InterruptedException {
        final AtomicLong reads = new AtomicLong();
        final AtomicLong writes = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicLong workerCpu = new AtomicLong();
        final java.lang.management.ThreadMXBean threadBean = java.lang.management.ManagementFactory.getThreadMXBean();
        final com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        final long cpuStart = os.getProcessCpuTime();
        final long start = System.nanoTime();
        final long end = start + millis * 1_000_000L;
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final SplittableRandom random = new SplittableRandom(System.nanoTime() + t);
            final Thread worker = new Thread(
                    () -> {
                        final long cpuAtStart = threadBean.getCurrentThreadCpuTime();
                        long r = 0;
                        long w = 0;
                        while (System.nanoTime() < end) {
                            try {
                                if (operation(readEmf, emf, random)) {
                                    w++;
                                } else {
                                    r++;
                                }
                            } catch (RuntimeException e) {
                                if (errors.incrementAndGet() <= 3) {
                                    System.err.println("operation failed: " + e);
                                }
                            }
                        }
                        reads.addAndGet(r);
                        writes.addAndGet(w);
                        workerCpu.addAndGet(threadBean.getCurrentThreadCpuTime() - cpuAtStart);
                    },
                    "worker-" + t);
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        final long elapsed = System.nanoTime() - start;
        final long cpu = os.getProcessCpuTime() - cpuStart;
        return "RESULT " + (reads.get() + writes.get()) + " " + reads.get() + " " + writes.get() + " " + errors.get()
                + " " + elapsed + " " + cpu + " " + workerCpu.get();
    }

    /** Runs one operation, its reads through {@code readEmf}; returns whether it was a write. */
    static boolean operation(EntityManagerFactory readEmf, EntityManagerFactory emf, SplittableRandom random) {
        final int kind = random.nextInt(100);
        final long id = 1 + random.nextInt(ITEMS);
        try (EntityManager em = (kind < 90 ? readEmf : emf).createEntityManager()) {
            if (kind < 60) {
                if (em.find(Item.class, id) == null) {
                    throw new IllegalStateException("item " + id + " missing");
                }
                return false;
            }
            if (kind < 90) {
                final long low = Math.min(id, ITEMS - 9);
                final int found = em.createQuery(
                                "select i from Item i where i.id between :low and :high order by i.id", Item.class)
                        .setParameter("low", low)
                        .setParameter("high", low + 9)
                        .getResultList()
                        .size();
                if (found != 10) {
                    throw new IllegalStateException("range query found " + found);
                }
                return false;
            }
            em.getTransaction().begin();
            try {
                final Item item = em.find(Item.class, id);
                item.qty++;
                em.persist(new ItemEvent(id, "qty " + item.qty));
                em.getTransaction().commit();
            } finally {
                if (em.getTransaction().isActive()) {
                    em.getTransaction().rollback();
                }
            }
            return true;
        }
    }
}
