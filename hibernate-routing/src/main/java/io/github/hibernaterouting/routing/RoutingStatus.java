package io.github.hibernaterouting.routing;

import io.github.hibernaterouting.routing.internal.bootstrap.RoutingRuntime;
import jakarta.persistence.EntityManagerFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of routing in one persistence unit, for status pages and health endpoints: each
 * node's statement counts, each replica's health and lag, and the latest decisions with their
 * reasons. Carries no SQL, parameters or credentials, and no URL except, masked, in a replica's
 * {@link Node#problem() problem}.
 *
 * @param nodes the primary first, then the replicas in configuration order
 * @param decisions the latest routing decisions, newest first (at most 64)
 */
public record RoutingStatus(List<Node> nodes, List<Decision> decisions) {

    /**
     * One server.
     *
     * @param name {@code primary}, {@code replica1}, …
     * @param primary whether this is the primary
     * @param up for a replica: answered its last check and its circuit breaker is closed; always true for the primary
     * @param lagBytes WAL left to replay at the last check; 0 for the primary, -1 if unknown
     * @param lagSeconds seconds behind while there is WAL to replay; 0 when caught up, NaN if unknown
     * @param reads read statements this node ran
     * @param writes statements that were not provably read-only (primary only)
     * @param pool the connections of the node's pool right now, or {@code null} when they cannot be known (a data
     *     source the application supplies that is not HikariCP)
     * @param problem for a replica the library refuses (a standby of another cluster or timeline, or
     *     a server whose identity its role may not read): why, naming it by its masked URL; then
     *     {@code up} is false. {@code null} otherwise
     * @param servers for a replica: the servers its connections reached, by address and port (one
     *     for a URL that names one standby, several behind a load-balanced endpoint, a relay or a
     *     multi-host URL); empty for the primary and before a replica's first answer
     */
    public record Node(
            String name,
            boolean primary,
            boolean up,
            long lagBytes,
            double lagSeconds,
            long reads,
            long writes,
            Pool pool,
            String problem,
            List<Server> servers) {}

    /**
     * One server behind a replica, as last learned from a connection that reached it; every read on
     * a connection to it is decided by what is known of this server.
     *
     * @param address the address it accepted connections on ({@code inet_server_addr()}), {@code local} for a socket
     * @param port the port it accepted connections on ({@code inet_server_port()})
     * @param inRecovery whether it reported being a standby
     * @param lagBytes WAL left to replay at its last answer, -1 if unknown
     * @param lagSeconds seconds behind while there is WAL to replay; 0 when caught up, NaN if unknown
     * @param problem why the library refuses it (another cluster or timeline, ahead of the primary), {@code null} if
     *     it does not
     */
    public record Server(
            String address, int port, boolean inRecovery, long lagBytes, double lagSeconds, String problem) {}

    /**
     * The connections of a node's pool.
     *
     * @param active connections borrowed by the application right now
     * @param idle connections waiting in the pool
     * @param maximum the pool's maximum size
     */
    public record Pool(int active, int idle, int maximum) {}

    /**
     * One routing decision.
     *
     * @param at when it was made
     * @param node the node that ran the statement
     * @param reason why, as in the {@code reason} tag of the meters ({@code read}, {@code write}, {@code escalated}, …)
     */
    public record Decision(Instant at, String node, String reason) {}

    /** The status of {@code emf}'s routing, or {@code null} when routing is off for it. */
    public static RoutingStatus of(EntityManagerFactory emf) {
        final RoutingRuntime runtime = RoutingRuntime.of(emf);
        if (runtime == null) {
            return null;
        }
        final Map<String, List<Server>> servers = new HashMap<>();
        runtime.forEachServer((node, address, port, inRecovery, lagBytes, lagSeconds, problem) ->
                servers.computeIfAbsent(node, n -> new ArrayList<>())
                        .add(new Server(address, port, inRecovery, lagBytes, lagSeconds, problem)));
        final List<Node> nodes = new ArrayList<>();
        runtime.forEachNode((name, primary, up, lagBytes, lagSeconds, reads, writes, active, idle, maximum, problem) ->
                nodes.add(new Node(
                        name,
                        primary,
                        up,
                        lagBytes,
                        lagSeconds,
                        reads,
                        writes,
                        maximum < 0 ? null : new Pool(active, idle, maximum),
                        problem,
                        List.copyOf(servers.getOrDefault(name, List.of())))));
        final List<Decision> decisions = new ArrayList<>();
        runtime.forEachDecision((epochMillis, node, reason) ->
                decisions.add(new Decision(Instant.ofEpochMilli(epochMillis), node, reason)));
        return new RoutingStatus(List.copyOf(nodes), List.copyOf(decisions));
    }
}
