package io.github.hibernaterouting.sample.web;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.hibernaterouting.routing.RoutingStatus;
import io.github.hibernaterouting.sample.SampleBootstrap;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /status}: {@link RoutingStatus} as JSON, for the page at {@code /}.
 *
 * <p>Public, like a health endpoint: the library's status carries no SQL, parameters, URLs or credentials.
 */
public class StatusServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        final RoutingStatus status = RoutingStatus.of(SampleBootstrap.entityManagerFactory(getServletContext()));
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("routing", status != null);
        json.put(
                "nodes",
                status == null
                        ? List.of()
                        : status.nodes().stream().map(StatusServlet::node).toList());
        json.put(
                "decisions",
                status == null
                        ? List.of()
                        : status.decisions().stream()
                                .map(StatusServlet::decision)
                                .toList());
        json.put(
                "workerRedeliveries",
                SampleBootstrap.worker(getServletContext()).retries());
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-store");
        JSON.writeValue(response.getWriter(), json);
    }

    private static Map<String, Object> node(RoutingStatus.Node node) {
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", node.name());
        json.put("primary", node.primary());
        json.put("up", node.up());
        // JSON has no NaN: unknown is null.
        json.put("lagBytes", node.lagBytes() < 0 ? null : node.lagBytes());
        json.put("lagSeconds", Double.isNaN(node.lagSeconds()) ? null : node.lagSeconds());
        json.put("reads", node.reads());
        json.put("writes", node.writes());
        if (node.problem() != null) {
            json.put("problem", node.problem());
        }
        if (node.pool() != null) {
            json.put(
                    "pool",
                    Map.of(
                            "active",
                            node.pool().active(),
                            "idle",
                            node.pool().idle(),
                            "maximum",
                            node.pool().maximum()));
        }
        if (!node.servers().isEmpty()) {
            json.put(
                    "servers",
                    node.servers().stream()
                            .map(server -> {
                                final Map<String, Object> one = new LinkedHashMap<>();
                                one.put("address", server.address() + ":" + server.port());
                                one.put("lagBytes", server.lagBytes() < 0 ? null : server.lagBytes());
                                one.put("problem", server.problem());
                                return one;
                            })
                            .toList());
        }
        return json;
    }

    private static Map<String, Object> decision(RoutingStatus.Decision decision) {
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("at", decision.at().toString());
        json.put("node", decision.node());
        json.put("reason", decision.reason());
        return json;
    }
}
