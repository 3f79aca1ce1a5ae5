package io.github.hibernaterouting.sample.web;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseEventSink;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The open event streams of {@code GET /api/events}, and what is sent to them: each user hears about
 * their own notes only. Thread-safe; the worker thread and request threads publish.
 */
public final class NoteEvents implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<Subscriber> subscribers = new CopyOnWriteArrayList<>();

    private record Subscriber(long userId, SseEventSink sink, Sse sse) {}

    /** Adds a stream for {@code userId}; it is dropped when the client goes away. */
    public void subscribe(long userId, SseEventSink sink, Sse sse) {
        subscribers.add(new Subscriber(userId, sink, sse));
    }

    /** Sends an event named {@code name} with {@code data} as JSON to the streams of {@code userId}. */
    public void publish(long userId, String name, Object data) {
        final String json = toJson(data);
        for (Subscriber subscriber : subscribers) {
            if (subscriber.sink().isClosed()) {
                subscribers.remove(subscriber);
            } else if (subscriber.userId() == userId) {
                subscriber
                        .sink()
                        .send(subscriber
                                .sse()
                                .newEventBuilder()
                                .name(name)
                                .mediaType(MediaType.APPLICATION_JSON_TYPE)
                                .data(String.class, json)
                                .build())
                        .exceptionally(failure -> {
                            // The client went away; forget the stream.
                            subscribers.remove(subscriber);
                            return null;
                        });
            }
        }
    }

    static String toJson(Object data) {
        try {
            return JSON.writeValueAsString(data);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("Cannot write an event as JSON: " + e.getMessage(), e);
        }
    }

    /** Closes every stream, at shutdown. */
    @Override
    public void close() {
        for (Subscriber subscriber : subscribers) {
            try {
                subscriber.sink().close();
            } catch (IOException | RuntimeException e) {
                // The client is gone already (the server learns it only when it writes): nothing to close.
            }
        }
        subscribers.clear();
    }
}
