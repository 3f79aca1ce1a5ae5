package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain;

import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.Optional;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Transactions as an application writes them; each reports the server that ran its statements. */
@Service
public class NoteService {
    @PersistenceContext
    private EntityManager entityManager;

    private final NoteRepository notes;

    public NoteService(NoteRepository notes) {
        this.notes = notes;
    }

    /** The port of the server that runs the next statement of the current unit of work. */
    public int serverPort() {
        return ((Number) entityManager
                        .createNativeQuery("select inet_server_port()")
                        .getSingleResult())
                .intValue();
    }

    @Transactional(readOnly = true)
    public int readOnlyTransactionPort() {
        return serverPort();
    }

    /** A read-write transaction that reads first: where it starts is the transaction mode's decision. */
    @Transactional
    public int readWriteTransactionFirstReadPort() {
        final int port = serverPort();
        notes.save(new Note("read-write"));
        return port;
    }

    /** A bean method whose annotation keeps its read-only transaction on the primary. */
    @RoutingStrategy(Strategy.PRIMARY)
    @Transactional(readOnly = true)
    public int primaryAnnotatedReadOnlyTransactionPort() {
        return serverPort();
    }

    @Transactional
    public long create(String text) {
        return notes.save(new Note(text)).getId();
    }

    @Transactional(readOnly = true)
    public Optional<String> text(long id) {
        return notes.findById(id).map(Note::getText);
    }

    /** Writes, then reads it back in the same transaction. */
    @Transactional
    public Optional<String> createAndRead(String text) {
        final long id = notes.save(new Note(text)).getId();
        entityManager.flush();
        entityManager.clear();
        return notes.findById(id).map(Note::getText);
    }

    /** Reads a note and changes it: a stale read here must not overwrite a newer row. */
    @Transactional
    public void rename(long id, String text) {
        notes.findById(id).orElseThrow().setText(text);
    }
}
