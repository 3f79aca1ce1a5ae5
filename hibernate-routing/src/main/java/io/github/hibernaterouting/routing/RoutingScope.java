package io.github.hibernaterouting.routing;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;
import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;

/**
 * A unit of routing context bound to the current thread: a strategy, and whether work in it has
 * written.
 *
 * <p>Scopes nest. The innermost scope that names a strategy decides for every session used inside
 * it (unless a query hint or a session property says otherwise). A scope may also carry a
 * <em>freshness floor</em> ({@link Builder#floor(Strategy)}, {@link Builder#floor(ConsistencyToken)}):
 * what a caller asked for, which no more specific level may weaken.
 *
 * <p>When a session inside a scope writes, the scope and all scopes around it are marked as having
 * written, so that under {@link Strategy#READ_AFTER_WRITE} later sessions in them read from the
 * primary. Scopes nested in a scope that has written know it too: their sessions read from the
 * primary under {@code READ_AFTER_WRITE} as well, as they would in the scope that wrote (a
 * {@link Routing#with} block inside a request that wrote, a {@link StampedWork} handler run inside
 * a scope that wrote). That lasts until the scope that wrote closes: prefer a scope per unit of work
 * (a request, a message) over one per thread.
 *
 * <pre>{@code
 * try (RoutingScope scope = RoutingScope.open(Strategy.PRIMARY)) {
 *     entityManager.find(Account.class, id); // served by the primary
 * }
 * }</pre>
 *
 * <p>A scope may also name an <em>actor</em> (whoever must see their own writes: a user, an API
 * key, a service identity) and a minimum WAL position its reads must reflect, for example from a
 * {@link ConsistencyToken}. Reads then use only replicas that have replayed the actor's last commit
 * and that position. When a unit of work in the scope commits a write, the scope records the
 * commit's position ({@link #lastCommit()}) and the actor's stamp is advanced.
 *
 * <pre>{@code
 * try (RoutingScope scope = RoutingScope.builder().actor("user-42").minimum(token).open()) {
 *     ...
 * }
 * }</pre>
 *
 * <p>A scope belongs to the thread that opened it and must be closed there, innermost first;
 * {@link #close()} throws {@link IllegalStateException} otherwise. The servlet filter and the
 * worker API open their own scopes; {@link Routing} offers a lambda form.
 */
public final class RoutingScope implements AutoCloseable {
    private final ScopeFrame frame;

    private RoutingScope(ScopeFrame frame) {
        this.frame = frame;
    }

    /** Builds a scope with an actor or a minimum position. */
    public static Builder builder() {
        return new Builder();
    }

    /** Options of a new scope; {@link #open()} binds it to the current thread. Not thread-safe. */
    public static final class Builder {
        private Strategy strategy;
        private String actor;
        private ConsistencyToken minimum;
        private Strategy floor;
        private ConsistencyToken floorPosition;

        private Builder() {}

        /** The strategy for work inside the scope; {@code null} (the default) inherits it. */
        public Builder strategy(Strategy strategy) {
            this.strategy = strategy;
            return this;
        }

        /**
         * Whose writes must be visible to the work inside the scope; {@code null} inherits it.
         *
         * @throws IllegalArgumentException if the key is blank or longer than 200 characters
         */
        public Builder actor(String actor) {
            if (actor != null && (actor.isBlank() || actor.length() > 200)) {
                throw new IllegalArgumentException(
                        "An actor key must be 1 to 200 characters, not blank: '" + actor + "'");
            }
            this.actor = actor;
            return this;
        }

        /** A position reads inside the scope must reflect; combined with any given before (the later wins). */
        public Builder minimum(ConsistencyToken minimum) {
            this.minimum = minimum == null ? this.minimum : minimum.max(this.minimum);
            return this;
        }

        /**
         * A freshness floor: reads inside the scope are at least as fresh as {@code floor}, whatever a
         * more specific level asks for. For what a caller asks of the application (a client that
         * sends {@code X-Force-Primary: true}, say), which must win over a query hint, an
         * EntityManager property or a nested scope that asks for less; the application's own choices
         * are {@link #strategy(Strategy) strategies}, where the most specific wins.
         *
         * <p>Freshness order: {@link Strategy#PRIMARY}, then {@link Strategy#READ_AFTER_WRITE}, then
         * {@link Strategy#STALE_READ}. Under a {@code PRIMARY} floor everything inside the scope runs
         * on the primary, also under {@link Strategy#REPLICA} (which then writes too); under a
         * {@code READ_AFTER_WRITE} floor {@code STALE_READ} becomes {@code READ_AFTER_WRITE}, and
         * {@code REPLICA} reads use only replicas that have replayed the position the scope requires.
         * Nested scopes keep the floor, and the freshest of several applies. Without a
         * {@link #strategy(Strategy) strategy}, the floor is also the scope's strategy.
         *
         * @param floor {@code PRIMARY}, {@code READ_AFTER_WRITE}, {@code STALE_READ} (no effect), or
         *     {@code null} for none
         * @throws IllegalArgumentException for {@link Strategy#REPLICA}, which asks for a server, not for freshness
         */
        public Builder floor(Strategy floor) {
            if (floor == Strategy.REPLICA) {
                throw new IllegalArgumentException("REPLICA cannot be a freshness floor: it asks for a replica, not for"
                        + " fresher reads. Use PRIMARY, READ_AFTER_WRITE or STALE_READ");
            }
            this.floor = floor;
            return this;
        }

        /**
         * A position floor: reads inside the scope reflect {@code position} under every strategy,
         * {@link Strategy#STALE_READ} and {@link Strategy#REPLICA} included, whose reads otherwise
         * require no position (a {@link #minimum(ConsistencyToken) minimum} holds only under
         * {@code READ_AFTER_WRITE}). For a position a caller sent (a consistency token), which a
         * more specific level must not ignore. It counts as a minimum too; combined with any given
         * before (the later wins).
         */
        public Builder floor(ConsistencyToken position) {
            this.floorPosition = position == null ? this.floorPosition : position.max(this.floorPosition);
            return this;
        }

        /** Opens the scope on the current thread, nested in the current one if there is one. */
        public RoutingScope open() {
            return (RoutingScope) ScopeFrame.open(
                            strategy != null ? strategy : floor,
                            floor,
                            actor,
                            minimum == null ? Lsn.UNKNOWN : minimum.position(),
                            floorPosition == null ? Lsn.UNKNOWN : floorPosition.position(),
                            RoutingScope::new)
                    .handle();
        }
    }

    /**
     * Opens a scope on the current thread, nested in the current one if there is one.
     *
     * @param strategy the strategy for work inside the scope, or {@code null} to inherit it
     * @return the open scope; close it (try-with-resources) on the same thread
     */
    public static RoutingScope open(Strategy strategy) {
        return builder().strategy(strategy).open();
    }

    /** The innermost open scope of the current thread, or {@code null}. */
    public static RoutingScope current() {
        final ScopeFrame frame = ScopeFrame.current();
        return frame == null ? null : (RoutingScope) frame.handle();
    }

    /** The strategy this scope was opened with, or {@code null} if it inherits. */
    public Strategy strategy() {
        return frame.strategy();
    }

    /** The strategy of this scope or, if it names none, of the nearest enclosing scope that does; else {@code null}. */
    public Strategy effectiveStrategy() {
        return frame.effectiveStrategy();
    }

    /**
     * The freshness floor of this scope, or the freshest of its enclosing scopes' (see
     * {@link Builder#floor(Strategy)}); else {@code null}.
     */
    public Strategy floor() {
        return frame.effectiveFloor();
    }

    /** The actor of this scope or of the nearest enclosing scope that names one; else {@code null}. */
    public String actor() {
        return frame.actor();
    }

    /** The latest minimum position given to this scope or an enclosing one, position floors included; else {@code null}. */
    public ConsistencyToken minimum() {
        return token(frame.minimum());
    }

    /**
     * The position of the latest commit of a write made inside this scope (or a scope nested in it),
     * or {@code null} if nothing was committed here. Hand it to callers as the token for their next read.
     */
    public ConsistencyToken lastCommit() {
        return token(frame.lastCommit());
    }

    /** Whether work inside this scope (or a scope nested in it) has written. */
    public boolean hasWritten() {
        return frame.hasWritten();
    }

    /**
     * What work done on another thread needs of this scope, for {@link Carried#open()} there: the
     * effective strategy, the actor, the minimum position raised to the last commit made here, and the
     * freshness floors a caller set (a {@code PRIMARY} floor, as {@code X-Force-Primary} and
     * {@code Consistency: strong} give, and a position floor, as a client's consistency token gives),
     * which no level of the other thread's work may weaken either. What is carried is what the scope
     * knows now: a write committed after this call is not covered. The Spring Boot starter's task
     * decorator and context-propagation accessor use it; call it yourself to hand work to a managed
     * executor or a thread of your own.
     */
    public Carried carry() {
        return new Carried(
                effectiveStrategy(), floor(), actor(), minimum(), token(frame.floorPosition()), lastCommit());
    }

    /**
     * A scope's routing as {@link #carry()} captured it, to open on another thread.
     *
     * @param strategy the effective strategy, or {@code null}
     * @param floor the freshness floor, or {@code null}
     * @param actor the actor, or {@code null}
     * @param minimum the minimum position, position floors included, or {@code null}
     * @param floorPosition the position floor, or {@code null}
     * @param lastCommit the position of the scope's last commit, or {@code null}
     */
    public record Carried(
            Strategy strategy,
            Strategy floor,
            String actor,
            ConsistencyToken minimum,
            ConsistencyToken floorPosition,
            ConsistencyToken lastCommit) {
        /** Opens a scope with what was carried on the current thread, nested in its current one; close it there. */
        public RoutingScope open() {
            return builder()
                    .strategy(strategy)
                    .floor(floor)
                    .floor(floorPosition)
                    .actor(actor)
                    .minimum(minimum)
                    .minimum(lastCommit)
                    .open();
        }
    }

    private static ConsistencyToken token(long position) {
        return position == Lsn.UNKNOWN ? null : ConsistencyToken.ofPosition(position);
    }

    /**
     * Unbinds this scope from the thread, making its parent current again.
     *
     * @throws IllegalStateException if called from another thread or while a nested scope is still open
     */
    @Override
    public void close() {
        frame.close();
    }
}
