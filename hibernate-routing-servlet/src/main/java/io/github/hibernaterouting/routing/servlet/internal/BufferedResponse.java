package io.github.hibernaterouting.routing.servlet.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Holds back a mutation's response body, flushes, errors and redirects until {@link #release()},
 * so that nothing reaches the client before the handler finished and the actor's stamp advanced,
 * even if the handler flushes early.
 *
 * <p>Headers and the status go to the wrapped response at once: they cannot reach the client
 * without a body write or a flush, and both are held back. Towards the handler the wrapper behaves
 * like a committed response once it flushed or sent an error or redirect ({@link #isCommitted()},
 * {@link #reset()} throwing), so handlers see the same rules as without it. After
 * {@link #release()} everything passes straight through (an asynchronous handler keeps writing).
 * Not thread-safe, like the response it wraps.
 *
 * <p>At most {@code memoryLimit} bytes of the body are held in memory; beyond that the body goes on
 * to a temporary file (deleted on {@link #release()} or {@link #discard()}), so a large response
 * still reaches the client only after the stamp advanced, and never holds unbounded memory.
 */
public final class BufferedResponse extends HttpServletResponseWrapper {
    /** The default of {@code memoryLimit}: 1 MiB. */
    public static final int DEFAULT_MEMORY_LIMIT = 1 << 20;

    private final Spool buffer;
    private BufferStream stream;
    private PrintWriter writer;
    private boolean committed;
    private boolean released;
    private boolean draining;
    private Action deferred;

    public BufferedResponse(HttpServletResponse response) {
        this(response, DEFAULT_MEMORY_LIMIT);
    }

    /** @param memoryLimit bytes of the body held in memory at most; the rest waits in a temporary file */
    public BufferedResponse(HttpServletResponse response, int memoryLimit) {
        super(response);
        this.buffer = new Spool(memoryLimit);
    }

    @FunctionalInterface
    private interface Action {
        void run() throws IOException;
    }

    private HttpServletResponse wrapped() {
        return (HttpServletResponse) getResponse();
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
        if (writer != null) {
            throw new IllegalStateException("getWriter() has already been called for this response");
        }
        if (stream == null) {
            stream = new BufferStream();
        }
        return stream;
    }

    @Override
    public PrintWriter getWriter() throws IOException {
        if (writer == null) {
            if (stream != null) {
                throw new IllegalStateException("getOutputStream() has already been called for this response");
            }
            final String encoding = getCharacterEncoding();
            // Make the charset explicit in Content-Type, as the container does when its own writer is taken.
            wrapped().setCharacterEncoding(encoding);
            stream = new BufferStream();
            writer = new PrintWriter(new OutputStreamWriter(stream, Charset.forName(encoding)));
        }
        return writer;
    }

    @Override
    public void flushBuffer() throws IOException {
        if (released) {
            if (writer != null) {
                writer.flush();
            }
            super.flushBuffer();
        } else {
            committed = true;
        }
    }

    @Override
    public boolean isCommitted() {
        return released ? super.isCommitted() : committed;
    }

    @Override
    public void reset() {
        if (released) {
            super.reset();
            return;
        }
        checkNotCommitted();
        discardBody();
        super.reset();
    }

    @Override
    public void resetBuffer() {
        if (released) {
            super.resetBuffer();
            return;
        }
        checkNotCommitted();
        discardBody();
    }

    @Override
    public void sendError(int status, String message) throws IOException {
        defer(() -> wrapped().sendError(status, message));
    }

    @Override
    public void sendError(int status) throws IOException {
        defer(() -> wrapped().sendError(status));
    }

    @Override
    public void sendRedirect(String location) throws IOException {
        defer(() -> wrapped().sendRedirect(location));
    }

    @Override
    public void sendRedirect(String location, int status) throws IOException {
        defer(() -> wrapped().sendRedirect(location, status));
    }

    @Override
    public void sendRedirect(String location, boolean clearBuffer) throws IOException {
        defer(() -> wrapped().sendRedirect(location, clearBuffer));
    }

    @Override
    public void sendRedirect(String location, int status, boolean clearBuffer) throws IOException {
        defer(() -> wrapped().sendRedirect(location, status, clearBuffer));
    }

    private void defer(Action action) throws IOException {
        if (released) {
            action.run();
            return;
        }
        checkNotCommitted();
        discardBody();
        committed = true;
        deferred = action;
    }

    private void checkNotCommitted() {
        if (committed) {
            throw new IllegalStateException("The response has already been committed");
        }
    }

    private void discardBody() {
        drainWriter();
        buffer.reset();
    }

    /** Bytes of the body held in memory now (never more than the memory limit). */
    public int bytesInMemory() {
        return buffer.memory.size();
    }

    /** Whether part of the body waits in a temporary file now. */
    public boolean spilled() {
        return buffer.file != null;
    }

    /** Drops a body that will never be released (the handler failed), and its temporary file. */
    public void discard() {
        if (!released) {
            buffer.deleteFile();
        }
    }

    /** Moves characters the writer still encodes into the buffer, without counting as the handler's flush. */
    private void drainWriter() {
        if (writer != null) {
            draining = true;
            try {
                writer.flush();
            } finally {
                draining = false;
            }
        }
    }

    /** Whether {@link #release()} has run. */
    public boolean isReleased() {
        return released;
    }

    /**
     * Sends what the handler produced to the wrapped response, then lets everything through.
     * Call it after the handler returned and the stamp advanced.
     */
    public void release() throws IOException {
        if (released) {
            return;
        }
        drainWriter();
        released = true;
        if (deferred != null) {
            deferred.run();
            return;
        }
        try {
            if (buffer.size() > 0) {
                buffer.writeTo(wrapped().getOutputStream());
            }
        } finally {
            buffer.reset();
        }
        if (committed) {
            wrapped().flushBuffer();
        }
    }

    /** The held-back body: in memory up to the limit, then in a temporary file. */
    private static final class Spool extends OutputStream {
        private final int memoryLimit;
        private final ByteArrayOutputStream memory = new ByteArrayOutputStream();
        private Path file;
        private OutputStream fileOut;
        private long size;

        Spool(int memoryLimit) {
            this.memoryLimit = memoryLimit;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            if (fileOut == null && memory.size() + (long) length > memoryLimit) {
                file = Files.createTempFile("hibernate-routing-response-", ".body");
                fileOut = new BufferedOutputStream(Files.newOutputStream(file));
            }
            if (fileOut != null) {
                fileOut.write(bytes, offset, length);
            } else {
                memory.write(bytes, offset, length);
            }
            size += length;
        }

        long size() {
            return size;
        }

        void writeTo(OutputStream out) throws IOException {
            memory.writeTo(out);
            if (fileOut != null) {
                fileOut.close();
                fileOut = null;
                try (InputStream in = Files.newInputStream(file)) {
                    in.transferTo(out);
                }
            }
        }

        void reset() {
            memory.reset();
            size = 0;
            deleteFile();
        }

        void deleteFile() {
            try {
                if (fileOut != null) {
                    fileOut.close();
                }
                if (file != null) {
                    Files.deleteIfExists(file);
                }
            } catch (IOException e) {
                // A temporary file that cannot be deleted is only disk space, deleted by the OS's temp cleanup.
            } finally {
                fileOut = null;
                file = null;
            }
        }
    }

    /** Buffers until release, then writes through. */
    private final class BufferStream extends ServletOutputStream {
        @Override
        public void write(int b) throws IOException {
            if (released) {
                wrapped().getOutputStream().write(b);
            } else {
                buffer.write(b);
            }
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            if (released) {
                wrapped().getOutputStream().write(bytes, offset, length);
            } else {
                buffer.write(bytes, offset, length);
            }
        }

        @Override
        public void flush() throws IOException {
            if (released) {
                wrapped().getOutputStream().flush();
            } else if (!draining) {
                committed = true;
            }
        }

        @Override
        public void close() throws IOException {
            if (released) {
                wrapped().getOutputStream().close();
            }
            // Closing before release only means "done": the body is sent on release.
        }

        @Override
        public boolean isReady() {
            return !released || wrappedIsReady();
        }

        @Override
        public void setWriteListener(WriteListener listener) {
            // Non-blocking output only exists for asynchronous handlers, which run past the filter anyway.
            try {
                release();
                wrapped().getOutputStream().setWriteListener(listener);
            } catch (IOException e) {
                throw new IllegalStateException("Could not release the buffered response for non-blocking output", e);
            }
        }

        private boolean wrappedIsReady() {
            try {
                return wrapped().getOutputStream().isReady();
            } catch (IOException e) {
                return false;
            }
        }
    }
}
