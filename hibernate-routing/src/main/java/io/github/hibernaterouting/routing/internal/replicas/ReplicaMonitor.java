package io.github.hibernaterouting.routing.internal.replicas;

import com.zaxxer.hikari.HikariDataSource;
import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, in the background, where the primary's WAL is and how far each replica has replayed it,
 * whether each replica is reachable and still in recovery; feeds the circuit breakers and the lag
 * bounds.
 *
 * <p>One daemon thread per persistence unit; {@link #close()} stops it.
 */
final class ReplicaMonitor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaMonitor.class);
    private static final int QUERY_TIMEOUT_SECONDS = 2;

    private final DataSource primary;
    private final List<ReplicaNode> replicas;
    private final LagBounds bounds;
    private final long intervalMillis;
    private final ScheduledExecutorService executor;
    private volatile long primaryLsn = Lsn.UNKNOWN;
    private volatile int primaryDefaultIsolation = IsolationLevel.UNKNOWN;

    ReplicaMonitor(DataSource primary, List<ReplicaNode> replicas, LagBounds bounds, long intervalMillis) {
        this.primary = primary;
        this.replicas = replicas;
        this.bounds = bounds;
        this.intervalMillis = intervalMillis;
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            final Thread thread = new Thread(runnable, "hibernate-routing-health");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Runs one check now, so routing starts from facts, then schedules the rest. */
    void start() {
        checkNow();
        executor.scheduleWithFixedDelay(this::checkQuietly, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
    }

    private void checkQuietly() {
        try {
            checkNow();
        } catch (RuntimeException e) {
            LOG.warn("Replica health check failed unexpectedly", e);
        }
    }

    /** Checks the primary and every replica once, on the calling thread. */
    void checkNow() {
        final long lsn = queryPrimaryLsn();
        for (ReplicaNode node : replicas) {
            final boolean wasUp = node.checked && node.isUp();
            final boolean wasInRecovery = node.inRecovery;
            final boolean answered = node.check(lsn, QUERY_TIMEOUT_SECONDS);
            if (!answered && (wasUp || !node.checked)) {
                LOG.warn("Replica {} does not answer; reads skip it until it does", node);
            } else if (answered && node.isUp() && !wasUp) {
                LOG.info(
                        "Replica {} is up (replayed {}, {} bytes behind)",
                        node,
                        Lsn.format(node.replayLsn),
                        node.lagBytes);
            }
            if (answered && !node.inRecovery && wasInRecovery && bounds.checkRecovery()) {
                LOG.error("Replica {} is not in recovery (promoted, or not a standby); it gets no reads", node);
            }
        }
    }

    private long queryPrimaryLsn() {
        try (Connection connection = primary.getConnection()) {
            final WalPositions.PrimaryState state = WalPositions.primaryState(connection, QUERY_TIMEOUT_SECONDS);
            if (state.defaultIsolation() != IsolationLevel.UNKNOWN) {
                primaryDefaultIsolation = state.defaultIsolation();
            }
            primaryLsn = state.writePosition();
            return state.writePosition();
        } catch (SQLException e) {
            // Lag cannot be measured without the primary; keep the last known position. Its pooled
            // connections are dead if it restarted: drop them so that the next caller gets a new one.
            LOG.warn("Cannot read the primary's WAL position: {}", e.getMessage());
            if (primary instanceof HikariDataSource pool && pool.getHikariPoolMXBean() != null) {
                pool.getHikariPoolMXBean().softEvictConnections();
            }
            return primaryLsn;
        }
    }

    /** The primary's write position as last checked; {@link Lsn#UNKNOWN} before the first answer. */
    long primaryPosition() {
        return primaryLsn;
    }

    /** The isolation level the primary's pooled connections get by default, as last checked; {@link IsolationLevel#UNKNOWN} before. */
    int primaryDefaultIsolation() {
        return primaryDefaultIsolation;
    }

    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
