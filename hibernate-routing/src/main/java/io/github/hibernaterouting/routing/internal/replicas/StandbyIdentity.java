package io.github.hibernaterouting.routing.internal.replicas;

import io.github.hibernaterouting.routing.internal.consistency.Lsn;

/**
 * Whether a server is a standby of this primary: the same system identifier (the same cluster),
 * the same timeline while it is in recovery (it follows this primary's history), and never ahead of
 * the primary. A standby replays only WAL the primary wrote, so one that has replayed past a
 * primary position read after it has WAL the primary never wrote: it was left on a history a
 * failover discarded (WAL lost with an old primary, an old primary restarted as a standby without
 * {@code pg_rewind}), and its data is not the primary's.
 */
final class StandbyIdentity {
    private StandbyIdentity() {}

    /**
     * Whether a standby that replayed {@code replay}, read at {@code observedAt}, is ahead of the
     * primary: judged only against a primary reading taken after it (an older one can be behind
     * legitimately); otherwise the earlier judgement {@code before} stands.
     */
    static boolean aheadOfPrimary(
            boolean before, boolean inRecovery, long replay, long observedAt, PrimaryReading primary) {
        final long readAt = primary.readAtNanos();
        final long position = primary.position();
        if (!inRecovery || replay == Lsn.UNKNOWN || position == Lsn.UNKNOWN) {
            return false;
        }
        if (readAt == 0 || readAt - observedAt < 0) {
            return before;
        }
        return Long.compareUnsigned(replay, position) > 0;
    }

    /**
     * Why the library refuses the server {@code name} as a standby of the primary, or {@code null}.
     *
     * @param systemIdentifier the server's, {@code null} if unknown
     * @param timeline the timeline it receives or replays WAL on, {@code 0} if unknown
     */
    static String problem(
            String name,
            String systemIdentifier,
            int timeline,
            boolean inRecovery,
            boolean aheadOfPrimary,
            PrimaryReading primary) {
        final String expected = primary.systemIdentifier();
        final int primaryTimeline = primary.timeline();
        if (expected != null && systemIdentifier != null && !expected.equals(systemIdentifier)) {
            return "Replica " + name + " belongs to another cluster (system identifier " + systemIdentifier
                    + ", the primary's is " + expected + "): it is not a standby of this primary and gets no"
                    + " reads. Check hibernate.routing.replica_urls (or HIBERNATE_ROUTING_REPLICA_URLS)";
        }
        if (inRecovery && primaryTimeline != 0 && timeline != 0 && timeline != primaryTimeline) {
            return "Replica " + name + " is on timeline " + timeline + ", the primary on timeline " + primaryTimeline
                    + ": it does not follow this primary's history (a promotion happened)"
                    + " and gets no reads until it does";
        }
        if (aheadOfPrimary) {
            return "Replica " + name + " has replayed WAL past the primary's position: it holds history the"
                    + " primary does not have (WAL lost in a failover, or a former primary that was not rewound)"
                    + " and gets no reads while it is ahead (make it again from the primary, or rewind it with"
                    + " pg_rewind)";
        }
        return null;
    }
}
