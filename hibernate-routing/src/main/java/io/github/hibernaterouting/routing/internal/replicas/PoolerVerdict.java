package io.github.hibernaterouting.routing.internal.replicas;

/**
 * What the library found of a connection pooler between it and one replica's standbys: whether it was
 * seen sharing a server connection between client connections (a transaction or statement pool mode),
 * and why the replica is refused because of it. Final once refused: a pooler's mode does not change
 * while it runs. Thread-safe.
 */
final class PoolerVerdict {
    private volatile boolean transactionPooled;
    private volatile String problem;

    /** Whether the pooler was seen to share a server connection between client connections. */
    boolean transactionPooled() {
        return transactionPooled;
    }

    void transactionPooled(boolean pooled) {
        this.transactionPooled = pooled;
    }

    /** Why every server behind the replica's URL is refused, naming the fix; {@code null} if none is. */
    String problem() {
        return problem;
    }

    void refuse(String problem) {
        this.problem = problem;
    }
}
