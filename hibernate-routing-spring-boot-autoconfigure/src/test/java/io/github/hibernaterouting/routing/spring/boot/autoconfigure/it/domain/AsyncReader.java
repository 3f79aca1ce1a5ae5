package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.domain;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.springframework.scheduling.annotation.Async;
import org.springframework.stereotype.Service;

/** Reads on another thread, as an {@code @Async} worker of the application does. */
@Service
public class AsyncReader {
    private final NoteService notes;

    public AsyncReader(NoteService notes) {
        this.notes = notes;
    }

    @Async
    public CompletableFuture<Optional<String>> text(long id) {
        return CompletableFuture.completedFuture(notes.text(id));
    }
}
