package io.github.hibernaterouting.sample.boot;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.List;
import java.util.Optional;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The notes, and which server answered each read (asked of the server, in the same transaction). */
@Service
public class NoteService {
    private final NoteRepository notes;
    private final NodeNames nodes;

    @PersistenceContext
    private EntityManager entityManager;

    public NoteService(NoteRepository notes, NodeNames nodes) {
        this.notes = notes;
        this.nodes = nodes;
    }

    /** What a read returned, and the server that ran it. */
    public record Served<T>(T value, String servedBy) {}

    @Transactional
    public Note create(String author, String text) {
        return notes.save(new Note(author, text));
    }

    @Transactional(readOnly = true)
    public Served<List<Note>> mine(String author) {
        return new Served<>(notes.findByAuthorOrderByIdDesc(author), servedBy());
    }

    @Transactional(readOnly = true)
    public Served<Optional<Note>> find(long id) {
        return new Served<>(notes.findById(id), servedBy());
    }

    private String servedBy() {
        final Number port = (Number)
                entityManager.createNativeQuery("select inet_server_port()").getSingleResult();
        return nodes.name(port.intValue());
    }
}
