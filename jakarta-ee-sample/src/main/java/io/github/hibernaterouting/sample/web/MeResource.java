package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.routing.Strategy;
import io.github.hibernaterouting.routing.servlet.RoutingStrategy;
import io.github.hibernaterouting.sample.SampleBootstrap;
import io.github.hibernaterouting.sample.domain.User;
import io.github.hibernaterouting.sample.domain.UserRepository;
import jakarta.servlet.ServletContext;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code GET /api/me}: the signed-in user's account, as the primary has it. */
@Path("me")
@Produces(MediaType.APPLICATION_JSON)
public class MeResource {
    @Context
    private ServletContext context;

    @Context
    private SecurityContext security;

    /**
     * The account, read on the primary: what a client shows about permissions must never be older
     * than the last change to them, and a replica may lag.
     */
    @GET
    @RoutingStrategy(Strategy.PRIMARY)
    public Response me() {
        final AuthenticatedUser principal = (AuthenticatedUser) security.getUserPrincipal();
        return SampleBootstrap.unitOfWork(context).read(em -> {
            final User user = new UserRepository(em).findById(principal.id()).orElseThrow();
            final String servedBy = ServedBy.lastReadNode(em, SampleBootstrap.nodeNames(context));
            final Map<String, Object> account = new LinkedHashMap<>();
            account.put("id", user.getId());
            account.put("name", user.getName());
            account.put("canWrite", user.canWrite());
            account.put("lastWritePosition", user.getReadAfterWriteLsn());
            return Response.ok(account).header(ServedBy.HEADER, servedBy).build();
        });
    }
}
