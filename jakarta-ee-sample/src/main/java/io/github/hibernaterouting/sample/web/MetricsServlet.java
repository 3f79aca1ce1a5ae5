package io.github.hibernaterouting.sample.web;

import io.github.hibernaterouting.sample.SampleBootstrap;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** {@code GET /metrics}: every meter, the routing library's included, in the Prometheus text format. */
public class MetricsServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain; version=0.0.4");
        response.setCharacterEncoding("UTF-8");
        response.getWriter()
                .write(SampleBootstrap.meterRegistry(getServletContext()).scrape());
    }
}
