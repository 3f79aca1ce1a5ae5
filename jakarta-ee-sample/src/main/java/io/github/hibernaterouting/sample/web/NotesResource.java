package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.routing.ConsistencyToken;
import io.github.hibernaterouting.routing.ReadYourWrites;
import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.sample.SampleBootstrap;
import io.github.hibernaterouting.sample.domain.Note;
import io.github.hibernaterouting.sample.domain.NoteRepository;
import io.github.hibernaterouting.sample.domain.UnitOfWork;
import io.github.hibernaterouting.sample.worker.NoteMessage;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.servlet.ServletContext;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The signed-in user's notes: {@code POST /api/notes}, {@code GET /api/notes},
 * {@code GET|PATCH|DELETE /api/notes/{id}}.
 *
 * <p>No routing code here: the routing filter runs mutations on the primary and reads under
 * {@code READ_AFTER_WRITE} for the user, so that {@code GET} right after {@code POST} finds the note
 * even on a replica that lags. Each response carries {@link ServedBy#HEADER}, a demo aid.
 */
@Path("notes")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class NotesResource {
    private static final int MAX_TITLE = 200;
    private static final int MAX_BODY = 10_000;

    @Context
    private ServletContext context;

    @Context
    private SecurityContext security;

    @Context
    private UriInfo uriInfo;

    /**
     * Creates a note; {@code 201} with its location, then the worker counts its words. With
     * {@code ?dryRun=true} the note is inserted, constraints and all, in a transaction that is then
     * rolled back: {@code 200} with the note as it would be stored, nothing kept, no commit position.
     */
    @POST
    public Response create(NoteInput input, @QueryParam("dryRun") @DefaultValue("false") boolean dryRun) {
        final AuthenticatedUser user = user();
        final String problem = validate(input, true);
        if (problem != null) {
            return badRequest(problem).build();
        }
        final Served<Note> created = unitOfWork().write(em -> {
            final Note note = new NoteRepository(em).create(new Note(user.id(), input.title(), input.body()));
            em.flush();
            if (dryRun) {
                unitOfWork().setRollbackOnly(em);
            }
            return new Served<>(note, ServedBy.lastReadNode(em, SampleBootstrap.nodeNames(context)));
        });
        final Note note = created.value();
        if (dryRun) {
            return Response.ok(NoteJson.of(note, null))
                    .header(ServedBy.HEADER, created.servedBy())
                    .build();
        }
        // Stamped after the commit, so the worker's read on a replica is sure to see the note.
        final ConsistencyToken stamp = ReadYourWrites.currentPosition(emf());
        SampleBootstrap.worker(context).publish(new NoteMessage(note.getId(), user.id(), stamp));
        SampleBootstrap.events(context).publish(user.id(), "note-created", Map.of("noteId", note.getId()));
        final URI location = uriInfo.getAbsolutePathBuilder()
                .path(Long.toString(note.getId()))
                .build();
        return Response.created(location)
                .entity(NoteJson.of(note, null))
                .header(ServedBy.HEADER, created.servedBy())
                .build();
    }

    /** The user's latest notes; may lag a moment behind their writes (see {@link NoteRepository#listByOwner}). */
    @GET
    public Response list(@QueryParam("limit") @DefaultValue("20") String limitParameter) {
        final AuthenticatedUser user = user();
        // A String, not an int: Jakarta REST answers a query parameter it cannot convert with 404, not 400.
        final int limit = parseLimit(limitParameter);
        if (limit < 0) {
            return badRequest("limit must be a number between 1 and 100").build();
        }
        return read(Strategy.STALE_READ, em -> {
            final List<NoteJson> notes = new NoteRepository(em)
                    .listByOwner(user.id(), limit).stream()
                            .map(note -> NoteJson.of(note, null))
                            .toList();
            return Response.ok(notes);
        });
    }

    /** One note, with the worker's word count once it has run. */
    @GET
    @Path("{id}")
    public Response get(@PathParam("id") long id) {
        final AuthenticatedUser user = user();
        return read(null, em -> {
            final NoteRepository notes = new NoteRepository(em);
            return notes.find(id, user.id())
                    .map(note ->
                            Response.ok(NoteJson.of(note, notes.wordCount(id).orElse(null))))
                    .orElseGet(NotesResource::notFound);
        });
    }

    /** Changes the title or the text; {@code 409} if the note changed concurrently. */
    @PATCH
    @Path("{id}")
    public Response update(@PathParam("id") long id, NoteInput input) {
        final AuthenticatedUser user = user();
        final String problem = validate(input, false);
        if (problem != null) {
            return badRequest(problem).build();
        }
        return write(em -> {
            final Optional<Note> found = new NoteRepository(em).find(id, user.id());
            if (found.isEmpty()) {
                return notFound();
            }
            final Note note = found.get();
            if (input.title() != null) {
                note.setTitle(input.title());
            }
            if (input.body() != null) {
                note.setBody(input.body());
            }
            // A concurrent change fails the versioned update when it is flushed: ApiExceptionMapper answers 409.
            em.flush();
            return Response.ok(NoteJson.of(note, null));
        });
    }

    /** Deletes a note; {@code 204}. */
    @DELETE
    @Path("{id}")
    public Response delete(@PathParam("id") long id) {
        final AuthenticatedUser user = user();
        return write(em -> {
            final NoteRepository notes = new NoteRepository(em);
            final Optional<Note> found = notes.find(id, user.id());
            if (found.isEmpty()) {
                return notFound();
            }
            notes.delete(found.get());
            em.flush();
            return Response.noContent();
        });
    }

    private AuthenticatedUser user() {
        // AuthenticationFilter guards /api/*, so there always is one.
        return (AuthenticatedUser) security.getUserPrincipal();
    }

    private EntityManagerFactory emf() {
        return SampleBootstrap.entityManagerFactory(context);
    }

    private UnitOfWork unitOfWork() {
        return SampleBootstrap.unitOfWork(context);
    }

    /**
     * Runs {@code work} as one reading unit of work and adds {@code X-Served-By} from its
     * EntityManager; {@code hinted} is the strategy its reads carry as a hint, or {@code null}.
     */
    private Response read(Strategy hinted, Function<EntityManager, Response.ResponseBuilder> work) {
        return unitOfWork()
                .read(em -> work.apply(em)
                        .header(ServedBy.HEADER, ServedBy.lastReadNode(em, SampleBootstrap.nodeNames(context), hinted)))
                .build();
    }

    /** The same in a transaction: the response is built once it committed. */
    private Response write(Function<EntityManager, Response.ResponseBuilder> work) {
        return unitOfWork()
                .write(em -> work.apply(em)
                        .header(ServedBy.HEADER, ServedBy.lastReadNode(em, SampleBootstrap.nodeNames(context))))
                .build();
    }

    /** A unit of work's result with the node its last read went to. */
    private record Served<T>(T value, String servedBy) {}

    /** The limit, or -1 unless it is a number from 1 to 100. */
    private static int parseLimit(String value) {
        try {
            final int limit = Integer.parseInt(value.trim());
            return limit >= 1 && limit <= 100 ? limit : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String validate(NoteInput input, boolean creating) {
        if (input == null) {
            return "Send a JSON body: {\"title\": \"...\", \"body\": \"...\"}";
        }
        if (creating && (input.title() == null || input.body() == null)) {
            return "title and body are required";
        }
        if (input.title() != null && (input.title().isBlank() || input.title().length() > MAX_TITLE)) {
            return "title must be 1 to " + MAX_TITLE + " characters";
        }
        if (input.body() != null && input.body().length() > MAX_BODY) {
            return "body must be at most " + MAX_BODY + " characters";
        }
        if (hasNul(input.title()) || hasNul(input.body())) {
            // PostgreSQL's text cannot hold U+0000.
            return "title and body must not contain the character U+0000";
        }
        return null;
    }

    private static boolean hasNul(String text) {
        return text != null && text.indexOf('\u0000') >= 0;
    }

    private static Response.ResponseBuilder badRequest(String message) {
        return Response.status(Response.Status.BAD_REQUEST).entity(ApiError.body(400, message));
    }

    private static Response.ResponseBuilder notFound() {
        return Response.status(Response.Status.NOT_FOUND).entity(ApiError.body(404, "No such note"));
    }
}
