package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.NoteRepository;
import io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain.NoteService;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class NotesController {
    private final NoteService service;
    private final NoteRepository repository;

    public NotesController(NoteService service, NoteRepository repository) {
        this.service = service;
        this.repository = repository;
    }

    @PostMapping("/notes")
    public String create(@RequestBody String text) {
        return Long.toString(service.create(text));
    }

    @GetMapping("/notes/{id}")
    public ResponseEntity<String> read(@PathVariable("id") long id) {
        return ResponseEntity.of(repository.findById(id).map(note -> note.getText()));
    }

    /** Two transactions in one request: the second must see the first's write. */
    @PostMapping("/notes/then-read")
    public ResponseEntity<String> createThenRead(@RequestBody String text) {
        final long id = service.create(text);
        return ResponseEntity.of(service.text(id));
    }

    /** Whether the request runs on a virtual thread ({@code virtual}) or not ({@code platform}); Java 17 has none. */
    @GetMapping("/thread")
    public String thread() throws ReflectiveOperationException {
        final boolean virtual = Runtime.version().feature() >= 21
                && (Boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread());
        return virtual ? "virtual" : "platform";
    }

    /** The server of a read-only transaction. */
    @GetMapping("/port")
    public String port() {
        return Integer.toString(service.readOnlyTransactionPort());
    }

    /** The server of a read-only transaction in a controller method annotated for the primary. */
    @GetMapping("/port/primary")
    @RoutingStrategy(Strategy.PRIMARY)
    public String primaryPort() {
        return Integer.toString(service.readOnlyTransactionPort());
    }

    /** The server of a read-only transaction in a bean method annotated for the primary. */
    @GetMapping("/port/primary-bean")
    public String primaryBeanPort() {
        return Integer.toString(service.primaryAnnotatedReadOnlyTransactionPort());
    }
}
