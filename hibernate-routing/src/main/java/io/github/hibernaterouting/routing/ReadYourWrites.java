package io.github.hibernaterouting.routing;

import io.github.hibernaterouting.routing.internal.bootstrap.RoutingRuntime;
import jakarta.persistence.EntityManagerFactory;
import java.sql.SQLException;
import java.util.Objects;
import org.hibernate.JDBCException;

/**
 * Read-your-writes across requests, application instances and workers, for code that is not in
 * the servlet filter's hands.
 *
 * <p>Inside a {@link RoutingScope} with an actor, the library does the rest by itself: it records
 * each committed write's WAL position in the scope ({@link RoutingScope#lastCommit()}) and in the
 * actor's stamp, and sends the actor's later reads only to replicas that have replayed it. This
 * class covers what happens between scopes: stamping a message, reading an actor's stamp, storing
 * the shared marker before a mutation, checking a token received from outside. Every method is a no-op or returns {@code null} when routing
 * is off for the persistence unit. Thread-safe.
 */
public final class ReadYourWrites {
    private ReadYourWrites() {}

    /**
     * The primary's current WAL position, for a publisher to stamp a message with after its write
     * committed; a worker then handles the message under that position ({@link StampedWork}).
     *
     * @return the token, or {@code null} when routing is off
     * @throws JDBCException if the primary cannot be asked
     */
    public static ConsistencyToken currentPosition(EntityManagerFactory emf) {
        final RoutingRuntime runtime = RoutingRuntime.of(emf);
        if (runtime == null) {
            return null;
        }
        try {
            return ConsistencyToken.ofPosition(runtime.currentPosition());
        } catch (SQLException e) {
            throw new JDBCException("Could not read the primary's WAL position", e);
        }
    }

    /**
     * Checks a token received from outside (a request header, a message from a system you do not
     * control) before reads use it as their minimum: a token ahead of the primary's current WAL
     * position was returned by no write, and would make every read that needs it wait for the
     * replicas, then use the primary. The servlet filter checks {@code X-Consistency-Token} with it;
     * call it wherever else a client hands you a token.
     *
     * <p>The token is compared with the highest primary position this instance knows (the health
     * check's last reading, and earlier answers of this check); only a token ahead of that, such as
     * one from a write through another instance in the last second, costs one query on the primary.
     * No replica is asked. Tokens produced by {@link ConsistencyToken#parse} never have the top bit
     * set, so they never collide with the library's own values.
     *
     * @return {@code token} (also when routing is off); {@code null} for {@code null}
     * @throws InvalidConsistencyTokenException if the token is ahead of the primary's current position
     * @throws JDBCException if the token is ahead of every position known here and the primary cannot be asked
     */
    public static ConsistencyToken checkToken(EntityManagerFactory emf, ConsistencyToken token) {
        final RoutingRuntime runtime = RoutingRuntime.of(emf);
        if (token == null || runtime == null) {
            return token;
        }
        final boolean reached;
        try {
            reached = runtime.primaryReached(token.position());
        } catch (SQLException e) {
            throw new JDBCException("Could not read the primary's WAL position to check a consistency token", e);
        }
        if (!reached) {
            throw new InvalidConsistencyTokenException(
                    token.toString(), "it is ahead of the primary's current WAL position, so no write returned it");
        }
        return token;
    }

    /**
     * The actor's stamp, read from the primary's actors' table ({@code actor_stamps=TABLE}) or this
     * instance's memory; never from a replica. A scope with the actor needs none of this: the library
     * reads the stamp itself. Use it where reads must reflect another actor's stamp, through
     * {@link RoutingScope.Builder#minimum}, or to stamp a message handled for the actor.
     *
     * @return the stamp, or {@code null} if the actor has none or routing is off
     */
    public static ConsistencyToken stampOf(EntityManagerFactory emf, String actor) {
        Objects.requireNonNull(actor, "actor");
        final RoutingRuntime runtime = RoutingRuntime.of(emf);
        if (runtime == null) {
            return null;
        }
        try {
            final long stamp = runtime.stampOf(actor);
            return stamp == 0 ? null : ConsistencyToken.ofPosition(stamp);
        } catch (SQLException e) {
            throw new JDBCException("Could not read the actor's stamp from the primary", e);
        }
    }

    /**
     * Stores the shared Redis marker that says {@code actor} has a mutation starting, so every
     * instance sends the actor's reads to the primary until the mutation commits. The servlet filter
     * calls this before a mutating request's handler runs; inside a scope with an actor the library
     * also does it before the first write. Call it inside a {@link RoutingScope} of {@code actor}: the
     * scope's next commit then removes this pending entry (and only this one); outside such a scope it
     * keeps the actor on the primary until the marker window ends. A no-op without
     * {@code hibernate.routing.redis.uri}.
     *
     * @throws ConsistencyMarkerException if Redis cannot be reached: do not run the mutation
     */
    public static void beforeMutation(EntityManagerFactory emf, String actor) {
        Objects.requireNonNull(actor, "actor");
        final RoutingRuntime runtime = RoutingRuntime.of(emf);
        if (runtime != null) {
            runtime.beforeMutation(actor);
        }
    }

    /**
     * Ends the mutation of the current {@link RoutingScope}, before its response is sent: the pending
     * entry {@link #beforeMutation} stored for the scope is removed if no commit took it and no write
     * of the actor's waits for a commit (a mutating request that wrote nothing, or answered 404), so
     * that the actor's reads go back to the replicas at once instead of after the marker window.
     * Closing the scope does the same; the servlet filter calls this before it releases the response.
     * A no-op without {@code hibernate.routing.redis.uri} or outside an actor's scope; a Redis failure
     * is logged and counted, never thrown (the entry then counts until it expires).
     */
    public static void mutationEnded(EntityManagerFactory emf) {
        final RoutingRuntime runtime = RoutingRuntime.of(emf);
        if (runtime != null) {
            runtime.mutationEnded();
        }
    }
}
