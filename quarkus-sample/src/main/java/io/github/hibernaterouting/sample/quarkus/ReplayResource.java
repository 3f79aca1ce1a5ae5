package io.github.hibernaterouting.sample.quarkus;

import io.github.hibernaterouting.testkit.PostgresCluster;
import io.quarkus.security.Authenticated;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * For the walk-through only: pauses and resumes WAL replay on the embedded replicas, so that they lag on demand.
 * Answers 404 when the sample runs on your own servers.
 */
@Path("/demo/replicas")
@Authenticated
public class ReplayResource {
    @POST
    @Path("/pause")
    public Response pause() throws SQLException {
        final PostgresCluster embedded = SampleMain.embedded;
        if (embedded == null) {
            return Response.status(Response.Status.NOT_FOUND).build();
        }
        // A transaction the replicas replay just before they pause: a replica counts as lagging from its last
        // replayed transaction on, and one more than max_replica_lag (10 s) behind gets no reads.
        try (Connection connection = embedded.connect(embedded.primary());
                Statement statement = connection.createStatement()) {
            statement.execute("select txid_current()");
        }
        embedded.awaitCaughtUp(Duration.ofSeconds(30));
        embedded.standbys().forEach(embedded::pauseReplay);
        return Response.ok("replay paused on both replicas\n").build();
    }

    @POST
    @Path("/resume")
    public Response resume() {
        final PostgresCluster embedded = SampleMain.embedded;
        if (embedded == null) {
            return Response.status(Response.Status.NOT_FOUND).build();
        }
        embedded.resumeAll();
        embedded.awaitCaughtUp(Duration.ofSeconds(30));
        return Response.ok("replay resumed; both replicas caught up\n").build();
    }
}
