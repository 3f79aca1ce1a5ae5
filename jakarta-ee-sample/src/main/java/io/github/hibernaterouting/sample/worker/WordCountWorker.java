package io.github.hibernaterouting.sample.worker;

import io.github.hibernaterouting.routing.RetryLaterException;
import io.github.hibernaterouting.routing.Routing;
import io.github.hibernaterouting.routing.StampedWork;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.sample.NodeNames;
import io.github.hibernaterouting.sample.domain.Note;
import io.github.hibernaterouting.sample.domain.NoteWordCount;
import io.github.hibernaterouting.sample.domain.UnitOfWork;
import io.github.hibernaterouting.sample.web.ServedBy;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceException;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the words of each new note in the background, reading the note from a replica that has
 * replayed the write: the worker side of read-your-writes.
 *
 * <p>The queue stands in for a message broker: a {@link DelayQueue}, so that a message given back
 * with {@link RetryLaterException} is delivered again only after its backoff. Under
 * {@link StampedWork.WhenBehind#RETRY} a message that arrives before any replica replayed its
 * write waits in the queue instead of loading the primary; after {@link #MAX_ATTEMPTS} deliveries it
 * is handled on the primary, as a broker's dead-letter handling would. One consumer thread; publish
 * from any thread.
 */
public final class WordCountWorker implements AutoCloseable {
    /** Deliveries under {@code RETRY} before the worker gives up waiting for a replica and uses the primary. */
    public static final int MAX_ATTEMPTS = 8;

    private static final Logger LOG = LoggerFactory.getLogger(WordCountWorker.class);

    private final UnitOfWork unitOfWork;
    private final NodeNames nodeNames;
    private final StampedWork work;
    private final BlockingQueue<Delivery> queue = new DelayQueue<>();
    private final Thread thread;
    private final BiConsumer<NoteMessage, NoteWordCount> onCounted;
    private final AtomicLong retries = new AtomicLong();
    private volatile boolean stopped;

    /**
     * Starts the consumer thread.
     *
     * @param unitOfWork where the worker's reads and writes run
     * @param threads makes the consumer thread (on a Jakarta EE server: its managed thread factory, so that the
     *     thread has the application's context)
     * @param whenBehind what to do with a message no replica has caught up with
     * @param onCounted called on the worker thread after each count is stored (the event stream)
     */
    public WordCountWorker(
            EntityManagerFactory emf,
            UnitOfWork unitOfWork,
            ThreadFactory threads,
            NodeNames nodeNames,
            StampedWork.WhenBehind whenBehind,
            BiConsumer<NoteMessage, NoteWordCount> onCounted) {
        this.unitOfWork = unitOfWork;
        this.nodeNames = nodeNames;
        this.onCounted = onCounted;
        // Short backoff: a replica that is behind usually catches up within milliseconds, and the demo should show it.
        this.work = StampedWork.builder(emf)
                .whenBehind(whenBehind)
                .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(5))
                .build();
        this.thread = threads.newThread(this::consume);
        this.thread.setName("sample-word-count-worker");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Queues the message for its first delivery. */
    public void publish(NoteMessage message) {
        queue.add(new Delivery(message, 1, 0));
    }

    /** How many deliveries were given back to the queue because no replica had caught up. */
    public long retries() {
        return retries.get();
    }

    private void consume() {
        while (!stopped) {
            final Delivery delivery;
            try {
                delivery = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            try {
                handle(delivery);
            } catch (RuntimeException e) {
                // A message that cannot be handled must not stop the worker; a broker would dead-letter it.
                LOG.error("Dropped the message for note {} after an error", delivery.message.noteId(), e);
            }
        }
    }

    private void handle(Delivery delivery) {
        final NoteMessage message = delivery.message;
        if (delivery.attempt > MAX_ATTEMPTS) {
            LOG.warn(
                    "No replica replayed {} after {} deliveries; counting note {} on the primary",
                    message.stamp(),
                    MAX_ATTEMPTS,
                    message.noteId());
            Routing.run(Strategy.PRIMARY, () -> count(message, delivery.attempt));
            return;
        }
        try {
            work.run(message.stamp(), delivery.attempt, () -> count(message, delivery.attempt));
        } catch (RetryLaterException e) {
            retries.incrementAndGet();
            LOG.info(
                    "Note {}: delivery {} found no replica at {}; redelivering in {} ms",
                    message.noteId(),
                    delivery.attempt,
                    message.stamp(),
                    e.retryAfter().toMillis());
            queue.add(new Delivery(message, delivery.attempt + 1, e.retryAfter().toMillis()));
        }
    }

    /** Reads the note (from a replica at or past the message's stamp), then stores its word count on the primary. */
    private void count(NoteMessage message, int attempt) {
        final NoteWordCount count = unitOfWork.read(em -> {
            final Note note = em.find(Note.class, message.noteId());
            final String readFrom = ServedBy.lastReadNode(em, nodeNames);
            if (note == null) {
                // Deleted since: the stamp guarantees the insert was visible, so this is not replication lag.
                LOG.info("Note {} is gone (read from {}); nothing to count", message.noteId(), readFrom);
                return null;
            }
            final String text = note.getTitle() + " " + note.getBody();
            final int words = text.isBlank() ? 0 : text.trim().split("\\s+").length;
            return new NoteWordCount(note.getId(), words, readFrom, attempt);
        });
        if (count == null) {
            return;
        }
        try {
            unitOfWork.write(em -> {
                em.persist(count);
                return count;
            });
        } catch (PersistenceException e) {
            // Most likely the note was deleted between the read and the insert.
            LOG.info("Could not store the word count of note {}: {}", message.noteId(), e.getMessage());
            return;
        }
        LOG.info(
                "Note {}: {} words, read from {} on delivery {}",
                count.getNoteId(),
                count.getWords(),
                count.getReadFrom(),
                attempt);
        onCounted.accept(message, count);
    }

    /** Stops the consumer thread, dropping queued messages (they are in memory only). */
    @Override
    public void close() {
        stopped = true;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One delivery of a message, due after its backoff. */
    private static final class Delivery implements Delayed {
        final NoteMessage message;
        final int attempt;
        final long dueNanos;

        Delivery(NoteMessage message, int attempt, long delayMillis) {
            this.message = message;
            this.attempt = attempt;
            this.dueNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }
}
