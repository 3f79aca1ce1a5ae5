package io.github.hibernaterouting.routing.spring.boot.autoconfigure.it.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Requests to a started application, as a user with a password, or anonymous. */
record Http(int port, String user) {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
        return send(request(path, headers).GET().build());
    }

    HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        return send(request(path)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "text/plain")
                .build());
    }

    private HttpRequest.Builder request(String path, String... headers) {
        final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (user != null) {
            request.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder()
                                    .encodeToString((user + ":" + user + "-pw").getBytes(StandardCharsets.UTF_8)));
        }
        if (headers.length > 0) {
            request.headers(headers);
        }
        return request;
    }

    private static HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
        return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
