package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@link WebTestApplication} in a JVM of its own, for {@link VirtualThreadsIT}: the properties come as
 * {@code key=value} arguments; it prints {@code PORT=<port>} once it listens and stops when its
 * standard input closes (when the test, its parent, ends).
 */
public final class VirtualThreadsMain {
    private VirtualThreadsMain() {}

    public static void main(String[] args) throws IOException {
        final Map<String, Object> properties = new HashMap<>();
        for (String arg : args) {
            final int equals = arg.indexOf('=');
            properties.put(arg.substring(0, equals), arg.substring(equals + 1));
        }
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(WebTestApplication.class)
                .web(WebApplicationType.SERVLET)
                .properties(properties)
                .run()) {
            System.out.println("PORT=" + WebTestApplication.port(context));
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the parent closes our input
            }
        }
        System.exit(0);
    }
}
