package io.github.hibernaterouting.sample.boot;

import io.github.hibernaterouting.testkit.PostgresCluster;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * For the walk-through only: pauses and resumes WAL replay on the embedded replicas, so that they
 * lag on demand. Answers 404 when the sample runs on your own servers.
 */
@RestController
public class ReplayController {
    private final ObjectProvider<PostgresCluster> cluster;

    public ReplayController(ObjectProvider<PostgresCluster> cluster) {
        this.cluster = cluster;
    }

    @PostMapping("/demo/replicas/pause")
    public ResponseEntity<String> pause() throws SQLException {
        final PostgresCluster embedded = cluster.getIfAvailable();
        if (embedded == null) {
            return ResponseEntity.notFound().build();
        }
        // A transaction the replicas replay just before they pause: a replica counts as lagging from its last
        // replayed transaction on, and one more than hibernate.routing.max_replica_lag (10 s) behind gets no reads.
        try (Connection connection = embedded.connect(embedded.primary());
                Statement statement = connection.createStatement()) {
            statement.execute("select txid_current()");
        }
        embedded.awaitCaughtUp(Duration.ofSeconds(30));
        embedded.standbys().forEach(embedded::pauseReplay);
        return ResponseEntity.ok("replay paused on both replicas\n");
    }

    @PostMapping("/demo/replicas/resume")
    public ResponseEntity<String> resume() {
        final PostgresCluster embedded = cluster.getIfAvailable();
        if (embedded == null) {
            return ResponseEntity.notFound().build();
        }
        embedded.resumeAll();
        embedded.awaitCaughtUp(Duration.ofSeconds(30));
        return ResponseEntity.ok("replay resumed; both replicas caught up\n");
    }
}
