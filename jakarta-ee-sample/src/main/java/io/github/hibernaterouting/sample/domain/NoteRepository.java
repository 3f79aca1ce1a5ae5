package io.github.hibernaterouting.sample.domain;

import io.github.hibernaterouting.routing.RoutingHints;
import io.github.hibernaterouting.routing.Strategy;
import jakarta.persistence.EntityManager;
import java.util.List;
import java.util.Optional;

/**
 * Reads and writes notes; not thread-safe, like the {@link EntityManager} it wraps.
 *
 * <p>Methods without a hint follow the request's strategy (the servlet filter's
 * {@code READ_AFTER_WRITE} for the user, {@code PRIMARY} for writes); the list is an explicit
 * exception, see {@link #listByOwner}.
 */
public final class NoteRepository {
    private final EntityManager em;

    public NoteRepository(EntityManager em) {
        this.em = em;
    }

    /** The note, if it exists and belongs to {@code ownerId}. */
    public Optional<Note> find(long id, long ownerId) {
        final Note note = em.find(Note.class, id);
        return note != null && note.getOwnerId() == ownerId ? Optional.of(note) : Optional.empty();
    }

    /**
     * The owner's latest notes, newest first, from any replica even right after the owner wrote.
     *
     * <p>{@code STALE_READ} trades read-your-writes for load on the primary: an overview may lag a
     * moment behind, the note itself ({@link #find}) never does.
     */
    public List<Note> listByOwner(long ownerId, int limit) {
        return em.createQuery("from Note n where n.ownerId = :owner order by n.id desc", Note.class)
                .setParameter("owner", ownerId)
                .setMaxResults(limit)
                .setHint(RoutingHints.DATABASE_HINT, RoutingHints.strategy(Strategy.STALE_READ))
                .getResultList();
    }

    /** The worker's word count of the note, if it has run yet. */
    public Optional<NoteWordCount> wordCount(long noteId) {
        return Optional.ofNullable(em.find(NoteWordCount.class, noteId));
    }

    /** Inserts {@code note}; call in a transaction. */
    public Note create(Note note) {
        em.persist(note);
        return note;
    }

    /** Deletes {@code note}; call in a transaction. */
    public void delete(Note note) {
        em.remove(note);
    }
}
