package io.github.hibernaterouting.sample.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The first filter of every request: gives it a request id and makes every error answer the API's
 * JSON ({@link ApiError}), whoever produced it.
 *
 * <ul>
 *   <li>The request id is the client's {@code X-Request-Id} if it is 1 to 100 characters of
 *       {@code [A-Za-z0-9._-]}, else a new UUID (the routing filter's rule). It is set before
 *       authentication, so that a request refused or failed there has one too, and the request is
 *       wrapped to carry it in {@code X-Request-Id}, so that the routing filter adopts the same id.
 *       It goes into the response header, the SLF4J MDC ({@code requestId}) and every error body.
 *   <li>An exception that reaches this filter (from authentication, the routing filter or a servlet)
 *       is answered with {@link ApiError#of}'s status and message, and logged with the request id;
 *       the stack trace goes to the log only. (Jakarta REST resources are handled before, by
 *       {@link ApiExceptionMapper}.)
 *   <li>{@code sendError} (the container's HTML error page) is answered as JSON instead.
 *   <li>A plain-text error body, which the routing filter writes for an invalid header ({@code 400})
 *       and a consistency marker it could not store ({@code 503}), becomes the {@code error} of a JSON
 *       body, with the same status and headers ({@code Retry-After}).
 * </ul>
 */
public class ApiErrorFilter extends HttpFilter {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ApiErrorFilter.class);
    /** The request id header, request and response. */
    public static final String REQUEST_ID_HEADER = "X-Request-Id";

    private static final Pattern VALID_ID = Pattern.compile("[A-Za-z0-9._-]{1,100}");

    /**
     * The id of the request this thread serves. Kept here and not only in the MDC: without an SLF4J
     * provider (a server that logs through java.util.logging, Payara among them) the MDC stores nothing.
     */
    private static final ThreadLocal<String> CURRENT_REQUEST_ID = new ThreadLocal<>();

    /** The id of the request this thread serves, or {@code null} outside one. */
    static String currentRequestId() {
        return CURRENT_REQUEST_ID.get();
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        final String requestId = requestId(request.getHeader(REQUEST_ID_HEADER));
        final String previous = MDC.get(ApiError.MDC_REQUEST_ID);
        final String previousId = CURRENT_REQUEST_ID.get();
        MDC.put(ApiError.MDC_REQUEST_ID, requestId);
        CURRENT_REQUEST_ID.set(requestId);
        final JsonErrorResponse errors = new JsonErrorResponse(response, requestId);
        try {
            response.setHeader(REQUEST_ID_HEADER, requestId);
            try {
                chain.doFilter(new RequestWithId(request, requestId), errors);
            } catch (IOException | ServletException | RuntimeException | Error e) {
                final ApiError error = ApiError.of(e);
                log(request, error, e);
                if (response.isCommitted()) {
                    // Too late for an answer of our own: the client sees a cut-off response.
                    return;
                }
                errors.answer(error);
                return;
            }
            errors.finish();
        } finally {
            if (previousId == null) {
                CURRENT_REQUEST_ID.remove();
            } else {
                CURRENT_REQUEST_ID.set(previousId);
            }
            if (previous == null) {
                MDC.remove(ApiError.MDC_REQUEST_ID);
            } else {
                MDC.put(ApiError.MDC_REQUEST_ID, previous);
            }
        }
    }

    /** Logs a failure: with its stack trace if it is the server's fault, else one line with its cause. */
    static void log(HttpServletRequest request, ApiError error, Throwable failure) {
        if (error.isServerFault()) {
            LOG.error("{} {} failed: {}", request.getMethod(), request.getRequestURI(), error.status(), failure);
        } else if (error.status() >= 500) {
            LOG.warn(
                    "{} {} answered {}: {}",
                    request.getMethod(),
                    request.getRequestURI(),
                    error.status(),
                    causes(failure));
        } else {
            LOG.info(
                    "{} {} answered {}: {}",
                    request.getMethod(),
                    request.getRequestURI(),
                    error.status(),
                    causes(failure));
        }
    }

    /** The chain of causes on one line: {@code Type: message <- Type: message …} (for the log only). */
    static String causes(Throwable failure) {
        final StringBuilder out = new StringBuilder();
        int depth = 0;
        for (Throwable t = failure; t != null && depth++ < 8; t = t.getCause() == t ? null : t.getCause()) {
            if (out.length() > 0) {
                out.append(" <- ");
            }
            out.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
        }
        return out.toString();
    }

    static String requestId(String header) {
        return header != null && VALID_ID.matcher(header).matches()
                ? header
                : UUID.randomUUID().toString();
    }

    /** The request, with {@code X-Request-Id} set to the id this filter chose. */
    private static final class RequestWithId extends HttpServletRequestWrapper {
        private final String requestId;

        RequestWithId(HttpServletRequest request, String requestId) {
            super(request);
            this.requestId = requestId;
        }

        @Override
        public String getHeader(String name) {
            return REQUEST_ID_HEADER.equalsIgnoreCase(name) ? requestId : super.getHeader(name);
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return REQUEST_ID_HEADER.equalsIgnoreCase(name)
                    ? Collections.enumeration(List.of(requestId))
                    : super.getHeaders(name);
        }

        @Override
        public Enumeration<String> getHeaderNames() {
            final List<String> names = new ArrayList<>();
            for (Enumeration<String> e = super.getHeaderNames(); e.hasMoreElements(); ) {
                final String name = e.nextElement();
                if (!REQUEST_ID_HEADER.equalsIgnoreCase(name)) {
                    names.add(name);
                }
            }
            names.add(REQUEST_ID_HEADER);
            return Collections.enumeration(names);
        }
    }

    /**
     * The response, turning {@code sendError} and plain-text error bodies into JSON. A body is captured
     * only when its status is an error and its content type is {@code text/plain} or {@code text/html}.
     */
    static final class JsonErrorResponse extends HttpServletResponseWrapper {
        private final String requestId;
        private ByteArrayOutputStream captured;
        private ServletOutputStream capturedStream;
        private PrintWriter capturedWriter;

        JsonErrorResponse(HttpServletResponse response, String requestId) {
            super(response);
            this.requestId = requestId;
        }

        private HttpServletResponse wrapped() {
            return (HttpServletResponse) getResponse();
        }

        @Override
        public void sendError(int status, String message) throws IOException {
            // The message is the container's or a framework's (a reason phrase, an exception message): not shown.
            sendError(status);
        }

        @Override
        public void sendError(int status) throws IOException {
            if (isCommitted()) {
                throw new IllegalStateException("The response is committed");
            }
            answer(ApiError.ofStatus(status));
        }

        @Override
        public void setContentType(String type) {
            if (captured == null
                    && getStatus() >= 400
                    && type != null
                    && (type.toLowerCase(Locale.ROOT).startsWith("text/plain")
                            || type.toLowerCase(Locale.ROOT).startsWith("text/html"))) {
                captured = new ByteArrayOutputStream();
                return;
            }
            if (captured == null) {
                super.setContentType(type);
            }
        }

        @Override
        public void setContentLength(int length) {
            if (captured == null) {
                super.setContentLength(length);
            }
        }

        @Override
        public void setContentLengthLong(long length) {
            if (captured == null) {
                super.setContentLengthLong(length);
            }
        }

        @Override
        public void setHeader(String name, String value) {
            if (captured == null || !isContentHeader(name)) {
                super.setHeader(name, value);
            }
        }

        @Override
        public void addHeader(String name, String value) {
            if (captured == null || !isContentHeader(name)) {
                super.addHeader(name, value);
            }
        }

        private static boolean isContentHeader(String name) {
            return "Content-Type".equalsIgnoreCase(name) || "Content-Length".equalsIgnoreCase(name);
        }

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
            if (captured == null) {
                return super.getOutputStream();
            }
            if (capturedStream == null) {
                capturedStream = new ServletOutputStream() {
                    @Override
                    public void write(int b) {
                        captured.write(b);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) {
                        captured.write(b, off, len);
                    }

                    @Override
                    public boolean isReady() {
                        return true;
                    }

                    @Override
                    public void setWriteListener(WriteListener listener) {
                        throw new UnsupportedOperationException("a captured error body is written synchronously");
                    }
                };
            }
            return capturedStream;
        }

        @Override
        public PrintWriter getWriter() throws IOException {
            if (captured == null) {
                return super.getWriter();
            }
            if (capturedWriter == null) {
                capturedWriter = new PrintWriter(new OutputStreamWriter(captured, StandardCharsets.UTF_8));
            }
            return capturedWriter;
        }

        @Override
        public void flushBuffer() throws IOException {
            if (captured == null) {
                super.flushBuffer();
            }
        }

        @Override
        public void reset() {
            super.reset();
            dropCapture();
            super.setHeader(REQUEST_ID_HEADER, requestId);
        }

        @Override
        public void resetBuffer() {
            super.resetBuffer();
            dropCapture();
        }

        private void dropCapture() {
            captured = null;
            capturedStream = null;
            capturedWriter = null;
        }

        /** Writes the captured plain-text error, if any, as JSON; called once the chain returned. */
        void finish() throws IOException {
            if (captured == null) {
                return;
            }
            if (capturedWriter != null) {
                capturedWriter.flush();
            }
            final String text = captured.toString(StandardCharsets.UTF_8).trim();
            final int status = getStatus();
            dropCapture();
            answer(new ApiError(status, text.isEmpty() ? ApiError.defaultMessage(status) : firstLine(text)));
        }

        private static String firstLine(String text) {
            final int newline = text.indexOf('\n');
            return newline < 0 ? text : text.substring(0, newline).trim();
        }

        /** Replaces whatever was buffered with {@code error}'s JSON; the headers set so far are kept. */
        void answer(ApiError error) throws IOException {
            final HttpServletResponse response = wrapped();
            dropCapture();
            response.resetBuffer();
            response.setStatus(error.status());
            response.setHeader(REQUEST_ID_HEADER, requestId);
            if (error.isTemporary()) {
                response.setHeader("Retry-After", Integer.toString(ApiError.RETRY_AFTER_SECONDS));
            }
            response.setHeader("Cache-Control", "no-store");
            response.setContentType("application/json;charset=UTF-8");
            final byte[] body = error.json(requestId).getBytes(StandardCharsets.UTF_8);
            response.setContentLength(body.length);
            try {
                response.getOutputStream().write(body);
            } catch (IllegalStateException writerInUse) {
                // The handler had taken the writer before it failed.
                response.getWriter().write(error.json(requestId));
            }
        }
    }
}
