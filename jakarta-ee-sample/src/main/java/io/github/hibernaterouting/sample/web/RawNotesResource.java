package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.sample.SampleBootstrap;
import jakarta.servlet.ServletContext;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code GET|PUT /api/raw/notes/{id}}: a note's title read and changed with native SQL instead of
 * entities, to show that raw statements are routed like entity queries: the native {@code select}
 * reads {@code READ_AFTER_WRITE} for the user, the native {@code update} runs on the primary and
 * stamps the user. Each response carries {@link ServedBy#HEADER}.
 */
@Path("raw/notes/{id}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RawNotesResource {
    @Context
    private ServletContext context;

    @Context
    private SecurityContext security;

    /** The note's id and title, by a native {@code select}; {@code 404} if the user has no such note. */
    @GET
    public Response get(@PathParam("id") long id) {
        final AuthenticatedUser user = (AuthenticatedUser) security.getUserPrincipal();
        return SampleBootstrap.unitOfWork(context).read(em -> {
            final List<?> titles = em.createNativeQuery("select title from notes where id = ?1 and owner_id = ?2")
                    .setParameter(1, id)
                    .setParameter(2, user.id())
                    .getResultList();
            final String servedBy = ServedBy.lastReadNode(em, SampleBootstrap.nodeNames(context));
            if (titles.isEmpty()) {
                return Response.status(Response.Status.NOT_FOUND)
                        .entity(ApiError.body(404, "No such note"))
                        .header(ServedBy.HEADER, servedBy)
                        .build();
            }
            final Map<String, Object> note = new LinkedHashMap<>();
            note.put("id", id);
            note.put("title", titles.get(0));
            return Response.ok(note).header(ServedBy.HEADER, servedBy).build();
        });
    }

    /** Sets the title by a native {@code update} in a transaction; {@code 404} if the user has no such note. */
    @PUT
    public Response put(@PathParam("id") long id, NoteInput input) {
        final AuthenticatedUser user = (AuthenticatedUser) security.getUserPrincipal();
        if (input == null
                || input.title() == null
                || input.title().isBlank()
                || input.title().length() > 200) {
            return Response.status(Response.Status.BAD_REQUEST)
                    .entity(ApiError.body(400, "title must be 1 to 200 characters"))
                    .build();
        }
        return SampleBootstrap.unitOfWork(context).write(em -> {
            final int updated = em.createNativeQuery(
                            "update notes set title = ?1, version = version + 1 where id = ?2 and owner_id = ?3")
                    .setParameter(1, input.title())
                    .setParameter(2, id)
                    .setParameter(3, user.id())
                    .executeUpdate();
            final String servedBy = ServedBy.lastReadNode(em, SampleBootstrap.nodeNames(context));
            if (updated == 0) {
                return Response.status(Response.Status.NOT_FOUND)
                        .entity(ApiError.body(404, "No such note"))
                        .header(ServedBy.HEADER, servedBy)
                        .build();
            }
            return Response.ok(Map.of("id", id, "title", input.title()))
                    .header(ServedBy.HEADER, servedBy)
                    .build();
        });
    }
}
