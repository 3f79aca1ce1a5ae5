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
     * Whether a standby that had replayed {@code replay} when it answered at {@code observedAt} is ahead
     * of the primary, judged against the primary's {@code position} read by a query sent at
     * {@code askedAt}. Only a query sent after the standby's answer proves anything: a standby of this
     * primary never has WAL the primary had not written by then, so a replay position past it is WAL the
     * primary never wrote; a reading asked earlier can be behind a healthy standby (the primary wrote, the
     * standby replayed, both after it), and then the earlier judgement {@code before} stands. A server
     * once proven ahead stays so: its history differs from the primary's for good, even once the
     * primary's position passes its own; only a server made again or rewound (a restart, which makes it
     * a new server to the library) is judged afresh.
     *
     * @param observedAt {@link System#nanoTime()} once the standby's answer had arrived
     * @param askedAt {@link System#nanoTime()} before the primary's query was sent, {@code 0} for never
     */
    static boolean aheadOfPrimary(
            boolean before, boolean inRecovery, long replay, long observedAt, long askedAt, long position) {
        if (!inRecovery || replay == Lsn.UNKNOWN || position == Lsn.UNKNOWN) {
            return false;
        }
        if (before || askedAt == 0 || askedAt - observedAt <= 0) {
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
                    + " and gets no reads until it is made again from the primary or rewound with pg_rewind";
        }
        return null;
    }
}
