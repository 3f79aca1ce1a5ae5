package io.github.hibernaterouting.routing.internal.consistency;

import io.github.hibernaterouting.routing.Strategy;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * One open routing scope of a thread: what the public {@code RoutingScope} is a handle to, and the
 * one owner of the thread's stack of scopes.
 *
 * <p>A frame holds what its opener gave (strategy, actor, minimum position, and the freshness floors
 * a client asked for: a strategy and a position no more specific level may weaken) and what the library
 * learns while it is open: whether work in it wrote, the position of its latest commit, the actor's
 * position as a persistence unit resolved it, and which persistence units stored a pending entry in
 * the actor's mutation marker, with its id, that no commit has removed yet. Writes and commits are
 * recorded in the frame and every enclosing one. A frame belongs to the thread that opened it.
 */
public final class ScopeFrame {
    private static final ThreadLocal<ScopeFrame> CURRENT = new ThreadLocal<>();

    private final ScopeFrame parent;
    private final Strategy strategy;
    private final Strategy floor;
    private final String actor;
    private final long minimum;
    private final long floorPosition;
    private final Thread owner;
    private final Object handle;
    private volatile boolean written;
    private volatile long lastCommit = Lsn.UNKNOWN;
    private boolean closed;
    /** A write of the actor's ran under this frame that no commit has recorded yet: its pending entries must stay. */
    private boolean uncommittedWrite;
    /** The persistence unit whose resolution of the actor's position {@link #resolvedMinimum} holds. */
    private Object resolvedFor;

    private long resolvedMinimum;
    /**
     * Per persistence unit that stored a pending entry in this frame's actor's mutation marker, the
     * entry's id ({@code null} without Redis), until a commit of the actor's takes it; else {@code null}.
     */
    private Map<Object, String> marks;
    /** What the units of work of this frame read on the primary, and which replica they read from. */
    private final ScopeReads reads;

    private ScopeFrame(
            ScopeFrame parent,
            Strategy strategy,
            Strategy floor,
            String actor,
            long minimum,
            long floorPosition,
            Function<ScopeFrame, ?> handle) {
        this.parent = parent;
        this.strategy = strategy;
        this.floor = floor;
        this.actor = actor;
        this.minimum = minimum;
        this.floorPosition = floorPosition;
        this.owner = Thread.currentThread();
        this.reads = new ScopeReads(parent == null ? null : parent.reads);
        this.handle = handle.apply(this);
    }

    /**
     * Opens a frame on the current thread, nested in the current one if there is one.
     *
     * @param minimum a position reads in it must reflect, {@link Lsn#UNKNOWN} for none
     * @param handle makes the public handle of the frame
     */
    public static ScopeFrame open(Strategy strategy, String actor, long minimum, Function<ScopeFrame, ?> handle) {
        return open(strategy, null, actor, minimum, Lsn.UNKNOWN, handle);
    }

    /**
     * Opens a frame with freshness floors on the current thread, nested in the current one if there is one.
     *
     * @param floor a strategy no more specific level may weaken ({@code PRIMARY}, {@code READ_AFTER_WRITE}
     *     or {@code STALE_READ}), or {@code null}
     * @param minimum a position reads in it must reflect under {@code READ_AFTER_WRITE}, {@link Lsn#UNKNOWN} for none
     * @param floorPosition a position reads in it must reflect under every strategy, {@link Lsn#UNKNOWN} for none
     * @param handle makes the public handle of the frame
     */
    public static ScopeFrame open(
            Strategy strategy,
            Strategy floor,
            String actor,
            long minimum,
            long floorPosition,
            Function<ScopeFrame, ?> handle) {
        if (floor == Strategy.REPLICA) {
            throw new IllegalArgumentException("REPLICA is not a freshness floor");
        }
        final ScopeFrame frame = new ScopeFrame(CURRENT.get(), strategy, floor, actor, minimum, floorPosition, handle);
        CURRENT.set(frame);
        return frame;
    }

    /** The innermost open frame of the current thread, or {@code null}. */
    public static ScopeFrame current() {
        return CURRENT.get();
    }

    /** The frame this one is nested in, or {@code null} for the outermost. */
    public ScopeFrame parent() {
        return parent;
    }

    /** The public handle of this frame. */
    public Object handle() {
        return handle;
    }

    /** The strategy the frame was opened with, or {@code null}. */
    public Strategy strategy() {
        return strategy;
    }

    /** The strategy of this frame or of the nearest enclosing one that names one; else {@code null}. */
    public Strategy effectiveStrategy() {
        for (ScopeFrame frame = this; frame != null; frame = frame.parent) {
            if (frame.strategy != null) {
                return frame.strategy;
            }
        }
        return null;
    }

    /**
     * The freshest floor of this frame and its enclosing ones, {@code PRIMARY} before
     * {@code READ_AFTER_WRITE} before {@code STALE_READ}; {@code null} if none has one.
     */
    public Strategy effectiveFloor() {
        Strategy freshest = null;
        for (ScopeFrame frame = this; frame != null; frame = frame.parent) {
            if (frame.floor != null && (freshest == null || freshness(frame.floor) > freshness(freshest))) {
                freshest = frame.floor;
            }
        }
        return freshest;
    }

    private static int freshness(Strategy strategy) {
        return switch (strategy) {
            case PRIMARY -> 3;
            case READ_AFTER_WRITE -> 2;
            case STALE_READ, REPLICA -> 1;
        };
    }

    /** The latest position floor of this frame or an enclosing one: reads must reflect it under every strategy; else {@link Lsn#UNKNOWN}. */
    public long floorPosition() {
        long latest = Lsn.UNKNOWN;
        for (ScopeFrame frame = this; frame != null; frame = frame.parent) {
            latest = Lsn.max(latest, frame.floorPosition);
        }
        return latest;
    }

    /** The actor of this frame or of the nearest enclosing one that names one; else {@code null}. */
    public String actor() {
        for (ScopeFrame frame = this; frame != null; frame = frame.parent) {
            if (frame.actor != null) {
                return frame.actor;
            }
        }
        return null;
    }

    /**
     * The latest minimum position given to this frame or an enclosing one, position floors included
     * (a floor is a minimum under every strategy); else {@link Lsn#UNKNOWN}.
     */
    public long minimum() {
        long latest = Lsn.UNKNOWN;
        for (ScopeFrame frame = this; frame != null; frame = frame.parent) {
            latest = Lsn.max(latest, Lsn.max(frame.minimum, frame.floorPosition));
        }
        return latest;
    }

    /** The position of the latest commit of a write made in this frame or one nested in it; {@link Lsn#UNKNOWN} if none. */
    public long lastCommit() {
        return lastCommit;
    }

    /** Whether work in this frame, or a frame nested in it, wrote. */
    public boolean hasWritten() {
        return written;
    }

    /**
     * Whether a write is known in this frame: one made in it or in a frame nested in it, or one made
     * in an enclosing frame (before this one opened, or in another frame nested in it). Reads here
     * must see it as they would in the frame that wrote: under {@code READ_AFTER_WRITE}, on the
     * primary.
     */
    public boolean writeKnown() {
        for (ScopeFrame frame = this; frame != null; frame = frame.parent) {
            if (frame.written) {
                return true;
            }
        }
        return false;
    }

    /** Records that work in this frame wrote, here and in every enclosing frame. */
    public void markWritten() {
        for (ScopeFrame frame = this; frame != null && !frame.written; frame = frame.parent) {
            frame.written = true;
        }
    }

    /** Records a committed write's position here and in every enclosing frame. */
    public void recordCommit(long position) {
        for (ScopeFrame frame = this; frame != null; frame = frame.parent) {
            frame.lastCommit = Lsn.max(frame.lastCommit, position);
            frame.written = true;
            frame.uncommittedWrite = false;
        }
    }

    /** The read floor of this frame's units of work, and the replica they prefer (monotonic reads per request). */
    public ScopeReads reads() {
        return reads;
    }

    /** A write is about to run under this frame: here and in the enclosing frames of the same actor, until a commit. */
    public void writing() {
        final String actor = actor();
        for (ScopeFrame frame = this; frame != null && Objects.equals(frame.actor(), actor); frame = frame.parent) {
            frame.uncommittedWrite = true;
        }
    }

    /**
     * The mutation of this frame ended: the id of the pending entry {@code resolver} stored for this
     * frame, taken, if no commit took it and no write of the actor's under this frame or an enclosing
     * one waits for a commit (which the entry must cover until it is raised); else {@code null}.
     */
    String takeUnusedMark(Object resolver) {
        if (marks == null || !marks.containsKey(resolver)) {
            return null;
        }
        final String actor = actor();
        for (ScopeFrame frame = this; frame != null && Objects.equals(frame.actor(), actor); frame = frame.parent) {
            if (frame.uncommittedWrite) {
                return null;
            }
        }
        return marks.remove(resolver);
    }

    /**
     * The actor's minimum position as resolved by one persistence unit, cached so that a frame looks
     * the actor up once; {@code resolver} identifies the persistence unit.
     */
    public long resolved(Object resolver, LongSupplier lookup) {
        if (resolvedFor != resolver) {
            resolvedMinimum = lookup.getAsLong();
            resolvedFor = resolver;
        }
        return resolvedMinimum;
    }

    /** Forgets the cached actor position here and in every enclosing frame, after the actor wrote. */
    public void forgetResolved() {
        for (ScopeFrame frame = this; frame != null; frame = frame.parent) {
            frame.resolvedFor = null;
        }
    }

    /**
     * Whether the persistence unit {@code resolver} stored a pending entry in the actor's mutation
     * marker, for this frame or an enclosing one of the same actor, that no commit has taken yet.
     */
    public boolean marked(Object resolver) {
        final String actor = actor();
        for (ScopeFrame frame = this; frame != null && Objects.equals(frame.actor(), actor); frame = frame.parent) {
            if (frame.marks != null && frame.marks.containsKey(resolver)) {
                return true;
            }
        }
        return false;
    }

    /** Records that {@code resolver} stored a pending entry with id {@code markerId} in the actor's mutation marker. */
    public void setMarked(Object resolver, String markerId) {
        if (marks == null) {
            marks = new IdentityHashMap<>(2);
        }
        marks.put(resolver, markerId);
    }

    /**
     * After a commit of the actor's: the ids of the pending entries {@code resolver} stored for this
     * frame and the enclosing ones of the same actor, which the commit covers; they are no longer
     * this scope's, so a later write stores a new one.
     */
    public List<String> takeMarks(Object resolver) {
        final String actor = actor();
        List<String> ids = List.of();
        for (ScopeFrame frame = this; frame != null && Objects.equals(frame.actor(), actor); frame = frame.parent) {
            if (frame.marks != null && frame.marks.containsKey(resolver)) {
                final String id = frame.marks.remove(resolver);
                if (id != null) {
                    if (ids.isEmpty()) {
                        ids = new ArrayList<>(2);
                    }
                    ids.add(id);
                }
            }
        }
        return ids;
    }

    /**
     * Unbinds this frame from the thread, making its parent current again; closing twice does nothing.
     *
     * @throws IllegalStateException if called from another thread or while a nested frame is still open
     */
    public void close() {
        if (closed) {
            return;
        }
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("A RoutingScope must be closed on the thread that opened it ("
                    + owner.getName() + "), not on " + Thread.currentThread().getName());
        }
        if (CURRENT.get() != this) {
            throw new IllegalStateException(
                    "RoutingScopes must be closed innermost first: a scope nested in this one is still open");
        }
        if (marks != null && !marks.isEmpty()) {
            // A mutation that committed nothing must not keep its actor on the primary for a whole window.
            for (Object resolver : List.copyOf(marks.keySet())) {
                if (resolver instanceof ReadYourWritesTracker tracker) {
                    tracker.mutationEnded(this);
                }
            }
        }
        closed = true;
        if (parent == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(parent);
        }
    }
}
