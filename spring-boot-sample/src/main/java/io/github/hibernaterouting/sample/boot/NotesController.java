package io.github.hibernaterouting.sample.boot;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import jakarta.persistence.EntityManagerFactory;
import java.net.URI;
import java.security.Principal;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The notes API; every answer that read says which server ran the read in {@code X-Served-By}. */
@RestController
public class NotesController {
    static final String SERVED_BY = "X-Served-By";

    private final NoteService notes;
    private final EntityManagerFactory entityManagerFactory;

    public NotesController(NoteService notes, EntityManagerFactory entityManagerFactory) {
        this.notes = notes;
        this.entityManagerFactory = entityManagerFactory;
    }

    public record NoteJson(long id, String author, String text) {
        static NoteJson of(Note note) {
            return new NoteJson(note.getId(), note.getAuthor(), note.getText());
        }
    }

    public record NoteInput(String text) {}

    @PostMapping("/api/notes")
    public ResponseEntity<?> create(@RequestBody NoteInput input, Principal user) {
        if (input == null || input.text() == null || input.text().isBlank()) {
            // A problem-details body (RFC 9457) that names the field, as Spring Boot's own errors are.
            final ProblemDetail problem = ProblemDetail.forStatusAndDetail(
                    HttpStatus.BAD_REQUEST, "The body needs a non-blank \"text\" field, such as {\"text\":\"hello\"}");
            problem.setProperty("field", "text");
            return ResponseEntity.of(problem).build();
        }
        final Note note = notes.create(user.getName(), input.text());
        return ResponseEntity.created(URI.create("/api/notes/" + note.getId())).body(NoteJson.of(note));
    }

    @GetMapping("/api/notes")
    public ResponseEntity<List<NoteJson>> mine(Principal user) {
        final NoteService.Served<List<Note>> mine = notes.mine(user.getName());
        return ResponseEntity.ok()
                .header(SERVED_BY, mine.servedBy())
                .body(mine.value().stream().map(NoteJson::of).toList());
    }

    @GetMapping("/api/notes/{id}")
    public ResponseEntity<NoteJson> one(@PathVariable long id) {
        final NoteService.Served<java.util.Optional<Note>> note = notes.find(id);
        return note.value()
                .map(found ->
                        ResponseEntity.ok().header(SERVED_BY, note.servedBy()).body(NoteJson.of(found)))
                .orElseGet(() -> ResponseEntity.notFound()
                        .header(SERVED_BY, note.servedBy())
                        .build());
    }

    /** The same read, always on the primary: {@code @RoutingStrategy} on a controller method. */
    @GetMapping("/api/notes/{id}/fresh")
    @RoutingStrategy(Strategy.PRIMARY)
    public ResponseEntity<NoteJson> fresh(@PathVariable long id) {
        return one(id);
    }

    /** The status page: each server's statement counts, health and lag, and the latest routing decisions. */
    @GetMapping("/api/status")
    public Map<String, Object> status() {
        final RoutingStatus status = RoutingStatus.of(entityManagerFactory);
        return Map.of("nodes", status.nodes(), "decisions", status.decisions());
    }
}
