package io.github.hibernaterouting.sample.quarkus;

import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.quarkus.ReadOnly;
import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import io.quarkus.security.Authenticated;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.eclipse.microprofile.context.ManagedExecutor;

/** The notes API; every answer that read says which server ran the read in {@code X-Served-By}. */
@Path("/api")
@Authenticated
public class NotesResource {
    static final String SERVED_BY = "X-Served-By";

    @Inject
    EntityManager entityManager;

    @Inject
    EntityManagerFactory entityManagerFactory;

    @Inject
    NodeNames nodes;

    @Inject
    ManagedExecutor executor;

    public record NoteJson(long id, String author, String text) {
        static NoteJson of(Note note) {
            return new NoteJson(note.id, note.author, note.text);
        }
    }

    public record NoteInput(String text) {}

    @POST
    @Path("/notes")
    @Transactional
    public Response create(NoteInput input, @Context SecurityContext security) {
        if (input == null || input.text() == null || input.text().isBlank()) {
            return Response.status(Response.Status.BAD_REQUEST)
                    .entity(Map.of("detail", "The body needs a non-blank \"text\" field, such as {\"text\":\"hello\"}"))
                    .build();
        }
        final Note note = new Note();
        note.author = security.getUserPrincipal().getName();
        note.text = input.text();
        note.persist();
        return Response.created(URI.create("/api/notes/" + note.id))
                .entity(NoteJson.of(note))
                .build();
    }

    /** A read-only transaction: on a replica, as one transaction there. */
    @GET
    @Path("/notes")
    @Transactional
    @ReadOnly
    public Response mine(@Context SecurityContext security) {
        final List<NoteJson> mine = Note.byAuthor(security.getUserPrincipal().getName()).stream()
                .map(NoteJson::of)
                .toList();
        return Response.ok(mine).header(SERVED_BY, servedBy()).build();
    }

    @GET
    @Path("/notes/{id}")
    public Response one(@PathParam("id") long id) {
        final Note note = Note.findById(id);
        final String servedBy = servedBy();
        return (note == null ? Response.status(Response.Status.NOT_FOUND) : Response.ok(NoteJson.of(note)))
                .header(SERVED_BY, servedBy)
                .build();
    }

    /** The same read, always on the primary: {@code @RoutingStrategy} on a resource method. */
    @GET
    @Path("/notes/{id}/fresh")
    @RoutingStrategy(Strategy.PRIMARY)
    public Response fresh(@PathParam("id") long id) {
        return one(id);
    }

    /**
     * The same read on a thread of a {@code ManagedExecutor}: Quarkus' context propagation carries the request's
     * routing scope (its actor, and so read-your-writes) to it.
     */
    @GET
    @Path("/notes/{id}/async")
    @Blocking
    public CompletionStage<Response> async(@PathParam("id") long id) {
        return executor.supplyAsync(() -> one(id));
    }

    /** Adds one to a counter (created at 0) that has no {@code @Version}. */
    @PUT
    @Path("/counters/{name}/increment")
    @Transactional
    public Map<String, Object> increment(@PathParam("name") String name) {
        Counter counter = entityManager.find(Counter.class, name);
        if (counter == null) {
            counter = new Counter();
            counter.name = name;
            entityManager.persist(counter);
        }
        counter.value++;
        // Here, not at commit, so that a refused write reaches the exception mapper as itself.
        entityManager.flush();
        return Map.of("name", name, "value", counter.value);
    }

    @GET
    @Path("/counters/{name}")
    public Response counter(@PathParam("name") String name) {
        final Counter counter = entityManager.find(Counter.class, name);
        final String servedBy = servedBy();
        return (counter == null
                        ? Response.status(Response.Status.NOT_FOUND)
                        : Response.ok(Map.of("name", name, "value", counter.value)))
                .header(SERVED_BY, servedBy)
                .build();
    }

    /** Each server's statement counts, health and lag, and the latest routing decisions. */
    @GET
    @Path("/status")
    public Map<String, Object> status() {
        final RoutingStatus status = RoutingStatus.of(entityManagerFactory);
        return Map.of("nodes", status.nodes(), "decisions", status.decisions());
    }

    private String servedBy() {
        final Number port = (Number)
                entityManager.createNativeQuery("select inet_server_port()").getSingleResult();
        return nodes.name(port.intValue());
    }
}
