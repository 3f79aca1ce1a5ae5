package io.github.hibernaterouting.routing.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;

/**
 * The JDBC savepoints of a routed connection's transaction. A savepoint writes nothing, so it
 * neither moves the unit of work to the primary nor counts as a write. Where the transaction runs on
 * the primary already, it is set there. Before that (a read-write transaction whose reads ran on a
 * replica, or a read-only one) nothing has been written that a rollback to it could undo, so it is
 * kept here and set on the primary, in order and before anything else runs there, when the
 * transaction first reaches the primary ({@link #reachedPrimary}); a rollback to or a release of one
 * that is still kept here has nothing to do on a server. Spring's {@code NESTED} propagation and JDBC
 * code use savepoints freely. Not thread-safe, like the connection.
 */
final class Savepoints {
    /** A savepoint handed to the application: set on {@link #connection}, or kept until the primary is reached. */
    static final class Routed implements Savepoint {
        private final int id;
        private final String name;
        private Connection connection;
        private Savepoint physical;

        Routed(int id, String name) {
            this.id = id;
            this.name = name;
        }

        @Override
        public int getSavepointId() throws SQLException {
            if (name != null) {
                throw new SQLException("Cannot retrieve the id of a named savepoint.");
            }
            return id;
        }

        @Override
        public String getSavepointName() throws SQLException {
            if (name == null) {
                throw new SQLException("Cannot retrieve the name of an unnamed savepoint.");
            }
            return name;
        }

        void setOn(Connection target) throws SQLException {
            physical = name == null ? target.setSavepoint() : target.setSavepoint(name);
            connection = target;
        }
    }

    private final List<Routed> open = new ArrayList<>(2);
    private int nextId;

    /**
     * A new savepoint of the transaction: inside a transaction begun with SQL, set where it runs; set
     * on the primary if the JDBC transaction runs there already, else kept until it does.
     *
     * @throws SQLException in auto-commit mode, as PostgreSQL's driver does
     */
    Savepoint set(String name, PhysicalConnections physicals) throws SQLException {
        final Connection sqlTransaction = physicals.control.transaction();
        if (sqlTransaction != null) {
            return name == null ? sqlTransaction.setSavepoint() : sqlTransaction.setSavepoint(name);
        }
        if (physicals.autoCommit) {
            throw new SQLException("Cannot establish a savepoint in auto-commit mode.", "25P01");
        }
        final Routed savepoint = new Routed(++nextId, name);
        if (physicals.primary != null) {
            savepoint.setOn(physicals.primary);
        }
        open.add(savepoint);
        return savepoint;
    }

    /** The transaction runs on {@code primary} from now on: the savepoints kept until now are set there, in order. */
    void reachedPrimary(Connection primary) throws SQLException {
        for (Routed savepoint : open) {
            if (savepoint.physical == null) {
                savepoint.setOn(primary);
            }
        }
    }

    /** Rolls back to {@code savepoint}, which stays; the savepoints set after it are gone, as on the server. */
    void rollback(Savepoint savepoint, PhysicalConnections physicals) throws SQLException {
        end(savepoint, physicals, false);
    }

    /** Releases {@code savepoint} and those set after it. */
    void release(Savepoint savepoint, PhysicalConnections physicals) throws SQLException {
        end(savepoint, physicals, true);
    }

    private void end(Savepoint savepoint, PhysicalConnections physicals, boolean release) throws SQLException {
        final Connection sqlTransaction = physicals.control.transaction();
        if (sqlTransaction != null && !(savepoint instanceof Routed)) {
            if (release) {
                sqlTransaction.releaseSavepoint(savepoint);
            } else {
                sqlTransaction.rollback(savepoint);
            }
            return;
        }
        final int at = indexOf(savepoint);
        final Routed routed = open.get(at);
        if (routed.physical != null) {
            if (release) {
                routed.connection.releaseSavepoint(routed.physical);
            } else {
                routed.connection.rollback(routed.physical);
            }
        }
        open.subList(release ? at : at + 1, open.size()).clear();
    }

    /** The transaction ended: its savepoints with it. */
    void clear() {
        open.clear();
    }

    private int indexOf(Savepoint savepoint) throws SQLException {
        final int at = savepoint instanceof Routed routed ? open.indexOf(routed) : -1;
        if (at < 0) {
            throw new SQLException(
                    "Not a savepoint of this connection's current transaction: it was released, rolled past,"
                            + " or its transaction ended",
                    "3B001");
        }
        return at;
    }
}
