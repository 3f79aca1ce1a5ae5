package io.github.hibernaterouting.routing.internal.session;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.hibernaterouting.routing.internal.consistency.ScopeFrame;

/**
 * What the stateless sessions of a routing scope read on replicas, for the lost-update check of
 * another stateless session in the same scope. Frameworks hand out stateless sessions per request
 * and per transaction (Quarkus injects both), so an entity is often read by one stateless session
 * and updated by another, which ran no replica read itself: {@link StatelessReads} of the writing
 * session alone would let the stale state through. A stateless session keeps no loaded state and
 * Hibernate fires no load event for it, so what was read cannot be tied to an instance; it is tied
 * to the scope the sessions share instead: an HTTP request (servlet filter, Spring, Quarkus), a
 * message handler, or {@code RoutingScope.open}. Outside any scope nothing is shared.
 *
 * <p>A replica statement is recorded in the current frame and every enclosing one, so that a session
 * in an outer frame sees what one in a nested frame read; a frame's record goes with the frame (held
 * weakly). A frame belongs to one thread, so each record is touched by one thread only. One per
 * persistence unit.
 */
public final class StatelessScopeReads {
    private final Cache<ScopeFrame, StatelessReads> byFrame =
            Caffeine.newBuilder().weakKeys().build();

    /** A stateless session runs {@code sql} on a replica. */
    void ran(String sql) {
        for (ScopeFrame frame = ScopeFrame.current(); frame != null; frame = frame.parent()) {
            byFrame.get(frame, ignored -> new StatelessReads()).ran(sql);
        }
    }

    /**
     * The first of {@code tables} that a stateless session of the current scope may have read on a
     * replica; {@code null} if none, or outside any scope.
     */
    String readOne(Iterable<String> tables) {
        final ScopeFrame frame = ScopeFrame.current();
        if (frame == null) {
            return null;
        }
        final StatelessReads reads = byFrame.getIfPresent(frame);
        return reads == null ? null : reads.readOne(tables);
    }
}
