package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.ReplicaSettings;
import io.github.hibernaterouting.routing.RoutingConfigurationException;
import io.github.hibernaterouting.routing.internal.consistency.IsolationLevel;
import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.WalPositions;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, in the background, where the primary's WAL is and how far each replica has replayed it,
 * whether each replica is reachable, still in recovery, and a standby of this primary (same system
 * identifier, same timeline); feeds the circuit breakers, the lag bounds and the refusals.
 *
 * <p>Every server is asked over the library's own connection ({@link ServerProbe}), never over the
 * application's pools, and on a thread of its own: a server that hangs delays only its own checks,
 * and the replicas' lag data keeps its age ({@link ReplicaNode#ineligibility}) so a check that stops
 * answering makes its replica ineligible rather than frozen. {@link #close()} stops the threads.
 */
final class ReplicaMonitor implements AutoCloseable, PrimaryReading {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaMonitor.class);

    private final ServerProbe primary;
    private final Runnable primaryFailed;
    private final List<ReplicaNode> replicas;
    private final LagBounds bounds;
    private final long intervalMillis;
    private final ScheduledThreadPoolExecutor executor;
    /** Servers behind a replica that no connection reached for this long leave its status. */
    private static final long FORGET_AFTER_NANOS = TimeUnit.MINUTES.toNanos(5);

    private volatile long primaryLsn = Lsn.UNKNOWN;
    /** {@link System#nanoTime()} when {@link #primaryLsn} was read; {@code 0} before the first answer. */
    private volatile long primaryReadAtNanos;
    /** {@link System#nanoTime()} just before the query that read {@link #primaryLsn} was sent; {@code 0} before. */
    private volatile long primaryAskedAtNanos;
    /** {@link System#nanoTime()} when a check of the primary last failed; {@code 0} for never. */
    private volatile long primaryFailedAtNanos;
    /** Whether the primary's server answered its last check, or a failure said only that the probe may not connect. */
    private volatile boolean primaryReachable = true;
    /** Whether the primary's last check answered; for logging a failure once, and the recovery. */
    private volatile boolean primaryAnswered = true;

    private volatile int primaryDefaultIsolation = IsolationLevel.UNKNOWN;
    private volatile String primarySystemIdentifier;
    private volatile int primaryTimeline;
    /** Which server answered the primary's last check ({@link WalPositions.PrimaryState#server()}). */
    private volatile String primaryServer;

    /** @param primaryFailed runs when the primary does not answer (its pooled connections may be dead) */
    ReplicaMonitor(
            ServerProbe primary,
            Runnable primaryFailed,
            List<ReplicaNode> replicas,
            LagBounds bounds,
            long intervalMillis) {
        this.primary = primary;
        this.primaryFailed = primaryFailed;
        this.replicas = replicas;
        this.bounds = bounds;
        this.intervalMillis = intervalMillis;
        // As recent as lag data must be to count, and never less than three checks.
        final long answeredWithin =
                Math.max(bounds.staleAfterNanos(), 3 * TimeUnit.MILLISECONDS.toNanos(intervalMillis));
        for (ReplicaNode node : replicas) {
            node.answeredWithin(answeredWithin);
        }
        final AtomicInteger threads = new AtomicInteger();
        this.executor = new ScheduledThreadPoolExecutor(1 + replicas.size(), runnable -> {
            final Thread thread = new Thread(runnable, "hibernate-routing-health-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Runs one check now, so routing starts from facts, then schedules the rest: the primary and each
     * replica on a schedule of their own.
     *
     * @throws RoutingConfigurationException if a server answers but its role may not read its
     *     identity, naming the {@code GRANT} that fixes it
     */
    void start() {
        checkPrimary(true);
        for (ReplicaNode node : replicas) {
            checkReplica(node, true);
        }
        // A reading asked after every replica answered: only that one can show a standby past the primary,
        // before the first read rather than one interval after it.
        checkPrimary(false);
        executor.scheduleWithFixedDelay(
                () -> quietly(() -> checkPrimary(false)), intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
        for (ReplicaNode node : replicas) {
            executor.scheduleWithFixedDelay(
                    () -> quietly(() -> checkReplica(node, false)),
                    intervalMillis,
                    intervalMillis,
                    TimeUnit.MILLISECONDS);
        }
    }

    private static void quietly(Runnable check) {
        try {
            check.run();
        } catch (RuntimeException e) {
            LOG.warn("Replica health check failed unexpectedly", e);
        }
    }

    /** Checks the primary and every replica once, on the calling thread. */
    void checkNow() {
        checkPrimary(false);
        for (ReplicaNode node : replicas) {
            checkReplica(node, false);
        }
    }

    /**
     * Reads the primary's position and identity. When the primary does not answer, every replica's lag
     * counts as unknown at once ({@link PrimaryReading#lagBasis}), lag measured before the failure
     * included, until a reading after it measures the lag again: the primary may have written any amount
     * since its last reading, so no lag is ever measured against a frozen position. The primary's
     * pool is emptied (only the library's own: a restarted server has invalidated its connections)
     * once per outage, and only when the server itself cannot be reached: a probe that may not connect
     * (the role's connection limit, a password the probe lacks) says nothing about the pool's
     * connections, and a probe connection ended on its own (an administrator's
     * {@code pg_terminate_backend}) is opened again at once.
     */
    private void checkPrimary(boolean bootstrap) {
        SQLException failure;
        try {
            readPrimary();
            judgeStandbys();
            return;
        } catch (SQLException e) {
            failure = e;
        }
        if (bootstrap && WalPositions.INSUFFICIENT_PRIVILEGE.equals(failure.getSQLState())) {
            throw RoutingConfigurationException.withMessage(
                    "jakarta.persistence.jdbc.user", identityMessage("The primary", primary.role(), failure));
        }
        if (primaryReachable && serverUnreachable(failure)) {
            // The probe's own connection may have been the only casualty: one more try, on a new one.
            try {
                readPrimary();
                judgeStandbys();
                return;
            } catch (SQLException e) {
                failure = e;
            }
        }
        final boolean unreachable = serverUnreachable(failure);
        if (!unreachable) {
            // The server answers, but not the probe (the role's connection limit, a password it lacks), while
            // the application's pool may go on writing: from now on a lag measured against an earlier reading
            // is unknown (PrimaryReading#lagBasis), as the last reading no longer bounds what a standby lacks.
            // A primary that cannot be reached at all is left to the reading's age (LagBounds), as before:
            // reads stay on the standbys through a short outage of the primary.
            final long now = System.nanoTime();
            primaryFailedAtNanos = now == 0 ? 1 : now;
        }
        if (primaryAnswered) {
            LOG.warn(
                    "Cannot read the primary's WAL position ({}); replica lag counts as unknown, and reads go to"
                            + " the primary, {} until it answers again",
                    failure.getMessage(),
                    unreachable ? "once its last reading is older than the lag data may be," : "from now");
        }
        primaryAnswered = false;
        if (unreachable && primaryReachable) {
            primaryFailed.run();
        }
        primaryReachable = !unreachable;
    }

    private void readPrimary() throws SQLException {
        final long askedAt = System.nanoTime();
        final WalPositions.PrimaryState state = primary.query(WalPositions::primaryState);
        if (state.defaultIsolation() != IsolationLevel.UNKNOWN) {
            primaryDefaultIsolation = state.defaultIsolation();
        }
        final String before = primaryServer;
        primaryServer = state.server();
        if (before != null && state.server() != null && !before.equals(state.server())) {
            // The primary's URL reaches another server than at the last check (a failover manager
            // re-pointed it, or the server restarted): every pooled connection is to the old one.
            LOG.info("The primary's URL reaches another server than before (a failover or a restart); its pooled"
                    + " connections are replaced");
            primaryFailed.run();
        }
        primarySystemIdentifier = state.systemIdentifier();
        primaryTimeline = state.timeline();
        primaryLsn = state.writePosition();
        // After the position: a reader that takes askedAt first then reads this position or a later one.
        primaryAskedAtNanos = askedAt == 0 ? 1 : askedAt;
        primaryReadAtNanos = System.nanoTime();
        if (!primaryAnswered) {
            LOG.info("The primary answers its health check again");
        }
        primaryAnswered = true;
        primaryReachable = true;
    }

    /**
     * Judges every known server of every replica again against the reading just taken, which was asked
     * after their last answers: one that had replayed past it then holds WAL this primary never wrote
     * ({@link StandbyIdentity#aheadOfPrimary}). Only a reading asked after a standby's answer can show
     * that, never the reading its answer was measured against.
     */
    private void judgeStandbys() {
        for (ReplicaNode node : replicas) {
            final BackendServer probeServer = node.servers().probeServer();
            boolean probeServerChanged = false;
            for (BackendServer server : node.servers().servers()) {
                final String before = server.problem();
                server.judgeAgainst(this);
                final String after = server.problem();
                if (java.util.Objects.equals(before, after)) {
                    continue;
                }
                if (server == probeServer) {
                    probeServerChanged = true;
                } else if (after != null) {
                    LOG.error(after);
                } else {
                    LOG.info("Replica {} is a standby of this primary again", node.describe(server));
                }
            }
            if (probeServerChanged) {
                verify(node);
            }
        }
    }

    /**
     * Whether {@code e} says the server could not be reached or went away (SQLSTATE class 08, or
     * 57P01 to 57P03: shut down, crashed, starting up), as opposed to a server that answered and
     * refused the probe (too many connections, authentication, privileges).
     */
    static boolean serverUnreachable(SQLException e) {
        final String state = e.getSQLState();
        return state == null
                || state.startsWith("08")
                || state.equals("57P01")
                || state.equals("57P02")
                || state.equals("57P03");
    }

    private void checkReplica(ReplicaNode node, boolean bootstrap) {
        final boolean wasUp = node.checked && node.isUp();
        final boolean wasInRecovery = node.inRecovery;
        try {
            node.check(this);
        } catch (SQLException e) {
            if (WalPositions.INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
                final String message =
                        identityMessage("Replica " + node, node.probe().role(), e);
                if (bootstrap) {
                    throw RoutingConfigurationException.withMessage(ReplicaSettings.REPLICA_USER, message);
                }
                refuse(node, message);
            } else if (wasUp || !node.checked) {
                LOG.warn("Replica {} does not answer ({}); reads skip it until it does", node, e.getMessage());
            }
            return;
        }
        verify(node);
        node.servers().forget(FORGET_AFTER_NANOS);
        if (node.problem() != null || bounds.checkRecovery() && !node.inRecovery) {
            // Refused: behind a load-balanced URL (one that reaches the primary too, say) the next
            // connection may reach a standby of this primary, so the next check opens a new one.
            node.probe().reconnect();
        }
        if (node.isUp() && !wasUp) {
            LOG.info(
                    "Replica {} is up (replayed {}, {} bytes behind)", node, Lsn.format(node.replayLsn), node.lagBytes);
        }
        if (!node.inRecovery && wasInRecovery && bounds.checkRecovery()) {
            LOG.error("Replica {} is not in recovery (promoted, or not a standby); it gets no reads", node);
        }
    }

    /**
     * Refuses a replica that is not a standby of this primary ({@link StandbyIdentity}): another
     * system identifier (another cluster, a wrong URL), or, while it is in recovery, another timeline
     * (a standby left behind by a promotion, or one that follows a newer primary), or a replay position
     * ahead of the primary's. Clears the refusal once it matches again.
     */
    private synchronized void verify(ReplicaNode node) {
        // Synchronized: the primary's check (judgeStandbys) and the replica's own each set the replica's
        // refusal from its server's current one, and the later of the two must not undo the other's.
        final BackendServer server = node.servers().probeServer();
        final String problem = server == null ? null : server.problem();
        if (problem != null) {
            refuse(node, problem);
        } else if (node.problem() != null) {
            LOG.info("Replica {} is a standby of this primary again", node);
            node.problem(null);
        }
    }

    private static void refuse(ReplicaNode node, String problem) {
        if (!problem.equals(node.problem())) {
            LOG.error(problem);
        }
        node.problem(problem);
    }

    private static String identityMessage(String server, String role, SQLException e) {
        return server + " does not let the library read its system identifier and timeline ("
                + e.getMessage() + "), which it compares to tell this primary's standbys from other servers."
                + " Run on the primary: " + WalPositions.identityGrants(role);
    }

    /** The primary's write position as last checked; {@link Lsn#UNKNOWN} before the first answer. */
    @Override
    public long position() {
        return primaryLsn;
    }

    @Override
    public long readAtNanos() {
        return primaryReadAtNanos;
    }

    @Override
    public long askedAtNanos() {
        return primaryAskedAtNanos;
    }

    @Override
    public long failedAtNanos() {
        return primaryFailedAtNanos;
    }

    @Override
    public long freshPosition() {
        final long readAt = lagBasis(primaryReadAtNanos);
        final boolean fresh = readAt != 0
                && (bounds.staleAfterNanos() == 0 || System.nanoTime() - readAt <= bounds.staleAfterNanos());
        return fresh ? primaryLsn : Lsn.UNKNOWN;
    }

    @Override
    public String systemIdentifier() {
        return primarySystemIdentifier;
    }

    @Override
    public int timeline() {
        return primaryTimeline;
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
        primary.close();
        for (ReplicaNode node : replicas) {
            node.probe().close();
        }
    }
}
