package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.sample.SampleBootstrap;
import jakarta.servlet.ServletContext;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseEventSink;
import java.util.Map;

/**
 * {@code GET /api/events}: a server-sent event stream of the user's notes being created and counted.
 *
 * <p>The routing filter runs subscriptions on the primary: a stream that stays open outlives any
 * replica's promise to be fresh enough. The first event, {@code hello}, says which server served
 * the request's read.
 */
@Path("events")
public class EventsResource {
    @Context
    private ServletContext context;

    @Context
    private SecurityContext security;

    /** Opens the stream; it stays open until the client goes away or the application stops. */
    @GET
    @Produces(MediaType.SERVER_SENT_EVENTS)
    public void subscribe(@Context SseEventSink sink, @Context Sse sse) {
        final AuthenticatedUser user = (AuthenticatedUser) security.getUserPrincipal();
        final String servedBy = SampleBootstrap.unitOfWork(context)
                .read(em -> ServedBy.lastReadNode(em, SampleBootstrap.nodeNames(context)));
        sink.send(sse.newEventBuilder()
                .name("hello")
                .mediaType(MediaType.APPLICATION_JSON_TYPE)
                .data(String.class, NoteEvents.toJson(Map.of("user", user.getName(), "servedBy", servedBy)))
                .build());
        SampleBootstrap.events(context).subscribe(user.id(), sink, sse);
    }
}
