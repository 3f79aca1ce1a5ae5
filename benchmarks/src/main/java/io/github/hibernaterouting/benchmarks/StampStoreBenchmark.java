package io.github.hibernaterouting.benchmarks;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;

/**
 * The in-memory actor-stamp store past its capacity: a million distinct actors write, and the program
 * prints, for the store before (a Caffeine cache of 100,000 entries, admission by frequency) and after
 * (segments that drop the oldest stamp and raise a floor), the heap the store retains and the share
 * of reads that may use a replica at a simulated replay lag, and how many reads would miss the
 * reader's own write.
 *
 * <p>No database: both stores are models of the library's decisions, written here because the
 * library keeps its store internal. Time, positions and the replica's replay are simulated: actor
 * {@code i} writes at position {@code i + 1} at {@code i / rate} seconds, and the replica has replayed
 * every write older than the lag. Run: {@code java -cp benchmarks/target/benchmarks.jar
 * io.github.hibernaterouting.benchmarks.StampStoreBenchmark [actors] [writes per second]}
 * (with {@code -XX:+UseSerialGC}, so that {@code System.gc()} is a full collection and the heap figures exact).
 */
public final class StampStoreBenchmark {
    private static final long UNKNOWN = 0L;
    private static final int CAPACITY = 100_000;
    private static final Duration TTL = Duration.ofSeconds(60);

    private StampStoreBenchmark() {}

    /** What the read path asks a store. */
    private interface Store {
        void advance(String actor, long lsn);

        long required(String actor);
    }

    /** The store before: Caffeine, expire after write, maximum size (W-TinyLFU admission). */
    private static final class CaffeineStore implements Store {
        private final Cache<String, Long> cache;

        CaffeineStore(LongSupplier clock) {
            final Ticker ticker = clock::getAsLong;
            cache = Caffeine.newBuilder()
                    .expireAfterWrite(TTL)
                    .maximumSize(CAPACITY)
                    .ticker(ticker)
                    // Maintenance on the writing thread, so that the model is deterministic; the
                    // library's cache evicts the same entries, only a little later.
                    .executor(Runnable::run)
                    .build();
        }

        @Override
        public void advance(String actor, long lsn) {
            cache.asMap().merge(actor, lsn, Math::max);
        }

        @Override
        public long required(String actor) {
            final Long stamp = cache.getIfPresent(actor);
            return stamp == null ? UNKNOWN : stamp;
        }
    }

    /** The store after: up to 64 segments in write order; a stamp dropped before its time raises its segment's floor. */
    private static final class FloorStore implements Store {
        private record Stamp(long lsn, long written) {}

        private static final class Segment {
            final int capacity;
            final LinkedHashMap<String, Stamp> stamps = new LinkedHashMap<>();
            long floor = UNKNOWN;
            long floorUntil;

            Segment(int capacity) {
                this.capacity = capacity;
            }
        }

        private final Segment[] segments;
        private final LongSupplier clock;
        private final long ttl = TTL.toNanos();

        FloorStore(LongSupplier clock) {
            this.clock = clock;
            int count = 1;
            while (count < 64 && CAPACITY / (count * 2) >= 256) {
                count *= 2;
            }
            segments = new Segment[count];
            for (int i = 0; i < count; i++) {
                segments[i] = new Segment(CAPACITY / count + (i < CAPACITY % count ? 1 : 0));
            }
        }

        private Segment segment(String actor) {
            final int h = actor.hashCode();
            return segments[(h ^ (h >>> 16)) & (segments.length - 1)];
        }

        private void expire(Segment s, long now) {
            if (s.floor != UNKNOWN && now - s.floorUntil >= 0) {
                s.floor = UNKNOWN;
            }
            final Iterator<Stamp> oldest = s.stamps.values().iterator();
            while (oldest.hasNext() && now - (oldest.next().written + ttl) >= 0) {
                oldest.remove();
            }
        }

        @Override
        public void advance(String actor, long lsn) {
            final Segment s = segment(actor);
            final long now = clock.getAsLong();
            expire(s, now);
            final Stamp old = s.stamps.remove(actor);
            s.stamps.put(actor, new Stamp(old == null ? lsn : Math.max(old.lsn, lsn), now));
            final Iterator<Stamp> oldest = s.stamps.values().iterator();
            while (s.stamps.size() > s.capacity) {
                final Stamp dropped = oldest.next();
                oldest.remove();
                s.floor = Math.max(s.floor, dropped.lsn);
                s.floorUntil = dropped.written + ttl;
            }
        }

        @Override
        public long required(String actor) {
            final Segment s = segment(actor);
            expire(s, clock.getAsLong());
            final Stamp stamp = s.stamps.get(actor);
            return Math.max(stamp == null ? UNKNOWN : stamp.lsn, s.floor);
        }
    }

    /** The results of one store at one lag. */
    private record Run(
            String store,
            double lagSeconds,
            long retainedBytes,
            long kept,
            double anyActorShare,
            double anyActorIdeal,
            double writerShare,
            double idealWriterShare,
            long missed,
            long writerReads) {}

    public static void main(String[] args) {
        final int actors = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        final int rate = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        System.out.printf(
                "%,d distinct actors write once each at %,d writes/s (simulated clock); capacity %,d, time to live %ds.%n"
                        + "Reads: after each write, one by an actor drawn from all %,d, and one by the actor that wrote"
                        + " d writes earlier, d uniform in [0, 2 x capacity).%n%n",
                actors, rate, CAPACITY, TTL.toSeconds(), actors);
        System.out.printf(
                "%-9s %6s %12s %8s %11s %14s %14s %14s %14s %16s%n",
                "store",
                "lag",
                "retained MB",
                "B/stamp*",
                "stamps kept",
                "any actor: rep",
                "any: ideal",
                "writer: rep",
                "writer: ideal",
                "writer: missed");
        final String[] stores = {"caffeine", "floor"};
        final long[] retained = {retainedBytes(stores[0], actors, rate), retainedBytes(stores[1], actors, rate)};
        for (double lag : new double[] {0.1, 1, 5, 20}) {
            for (int k = 0; k < stores.length; k++) {
                final Run run = run(stores[k], actors, rate, lag, retained[k]);
                System.out.printf(
                        "%-9s %5.1fs %12.1f %8d %,11d %13.1f%% %13.1f%% %13.1f%% %13.1f%% %,9d (%4.1f%%)%n",
                        run.store,
                        run.lagSeconds,
                        run.retainedBytes / 1e6,
                        run.kept == 0 ? 0 : run.retainedBytes / run.kept,
                        run.kept,
                        100.0 * run.anyActorShare,
                        100.0 * run.anyActorIdeal,
                        100.0 * run.writerShare,
                        100.0 * run.idealWriterShare,
                        run.missed,
                        100.0 * run.missed / run.writerReads);
            }
        }
        System.out.printf(
                "%nrep: share of reads a replica at that lag may serve. ideal: with unbounded memory (a read may use"
                        + " the replica iff it has the reader's write).%nmissed: reads the store lets use a replica"
                        + " that lacks the reader's own write (read-your-writes broken).%n*: the store's heap (used heap after"
                        + " GC, after minus before) per stamp kept, without the actor key strings.%n");
    }

    private static Run run(String kind, int actors, int rate, double lagSeconds, long retainedBytes) {
        final long[] now = {0L};
        final String[] names = new String[actors];
        for (int i = 0; i < actors; i++) {
            names[i] = "actor-" + i;
        }
        final Store store = kind.equals("caffeine") ? new CaffeineStore(() -> now[0]) : new FloorStore(() -> now[0]);
        final long nanosPerWrite = 1_000_000_000L / rate;
        final long lagWrites = Math.round(lagSeconds * rate);
        final SplittableRandom random = new SplittableRandom(42);
        long anyEligible = 0;
        long anyIdeal = 0;
        long writerEligible = 0;
        long writerIdeal = 0;
        long missed = 0;
        long writerReads = 0;
        for (int i = 0; i < actors; i++) {
            now[0] = i * nanosPerWrite;
            store.advance(names[i], i + 1L);
            // The replica has replayed every write made more than the lag ago.
            final long replayed = Math.max(0, i + 1L - lagWrites);
            final int anyone = random.nextInt(actors);
            if (store.required(names[anyone]) <= replayed) {
                anyEligible++;
            }
            // Its own write, if it wrote yet and within the time to live.
            if (anyone > i || (i - anyone) * nanosPerWrite >= TTL.toNanos() || anyone + 1L <= replayed) {
                anyIdeal++;
            }
            final int writer = i - random.nextInt(Math.min(i + 1, 2 * CAPACITY));
            final long own = writer + 1L;
            final boolean eligible = store.required(names[writer]) <= replayed;
            final boolean ideal = own <= replayed;
            writerReads++;
            if (eligible) {
                writerEligible++;
            }
            if (ideal) {
                writerIdeal++;
            }
            if (eligible && !ideal) {
                missed++;
            }
        }
        return new Run(
                kind,
                lagSeconds,
                retainedBytes,
                countKept(store),
                (double) anyEligible / actors,
                (double) anyIdeal / actors,
                (double) writerEligible / writerReads,
                (double) writerIdeal / writerReads,
                missed,
                writerReads);
    }

    /**
     * The store's own heap after every actor wrote: used heap after a full GC, with the store and
     * without it. The names array holds every key in both, so the keys the store keeps are not counted.
     */
    private static long retainedBytes(String kind, int actors, int rate) {
        final long[] now = {0L};
        final String[] names = new String[actors];
        for (int i = 0; i < actors; i++) {
            names[i] = "actor-" + i;
        }
        final long before = usedHeapAfterGc();
        final Store store = kind.equals("caffeine") ? new CaffeineStore(() -> now[0]) : new FloorStore(() -> now[0]);
        final long nanosPerWrite = 1_000_000_000L / rate;
        for (int i = 0; i < actors; i++) {
            now[0] = i * nanosPerWrite;
            store.advance(names[i], i + 1L);
        }
        countKept(store);
        final long after = usedHeapAfterGc();
        Reference.reachabilityFence(store);
        Reference.reachabilityFence(names);
        return after - before;
    }

    private static long countKept(Store store) {
        if (store instanceof CaffeineStore c) {
            c.cache.cleanUp();
            return c.cache.estimatedSize();
        }
        long kept = 0;
        for (FloorStore.Segment s : ((FloorStore) store).segments) {
            kept += s.stamps.size();
        }
        return kept;
    }

    private static long usedHeapAfterGc() {
        final Runtime runtime = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return runtime.totalMemory() - runtime.freeMemory();
    }
}
