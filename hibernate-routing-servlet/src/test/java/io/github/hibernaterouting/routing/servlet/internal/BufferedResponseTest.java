package io.github.hibernaterouting.routing.servlet.internal;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What a held-back mutation response costs in memory, and that all of it reaches the client on release only. */
class BufferedResponseTest {
    /** The client's side of the wrapped response. */
    private final ByteArrayOutputStream client = new ByteArrayOutputStream();

    private HttpServletResponse wrapped() {
        final ServletOutputStream out = new ServletOutputStream() {
            @Override
            public void write(int b) {
                client.write(b);
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener listener) {}
        };
        return (HttpServletResponse) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) -> {
                    return switch (method.getName()) {
                        case "getOutputStream" -> out;
                        case "getCharacterEncoding" -> "UTF-8";
                        case "isCommitted" -> false;
                        default -> null;
                    };
                });
    }

    private static long bodyFiles() throws IOException {
        try (Stream<Path> files = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return files.filter(p -> p.getFileName().toString().startsWith("hibernate-routing-response-"))
                    .count();
        }
    }

    @Test
    void bodyBeyondTheMemoryLimit_holdsAtMostTheLimitInMemory_andReachesTheClientWholeOnReleaseOnly()
            throws IOException {
        final long filesBefore = bodyFiles();
        final BufferedResponse response = new BufferedResponse(wrapped(), 4096);
        final byte[] chunk = new byte[1000];
        Arrays.fill(chunk, (byte) 'x');
        final ServletOutputStream out = response.getOutputStream();
        for (int i = 0; i < 5000; i++) { // 5 MB
            out.write(chunk);
            assertThat(response.bytesInMemory()).isLessThanOrEqualTo(4096);
        }
        out.flush();
        assertThat(response.spilled()).isTrue();
        assertThat(client.size()).as("nothing before release").isZero();
        response.release();
        assertThat(client.size()).isEqualTo(5_000_000);
        assertThat(response.spilled()).isFalse();
        assertThat(bodyFiles()).as("the temporary file is gone").isEqualTo(filesBefore);
    }

    @Test
    void bodyWithinTheLimit_staysInMemory_andABodyNeverReleased_leavesNoFile() throws IOException {
        final long filesBefore = bodyFiles();
        final BufferedResponse small = new BufferedResponse(wrapped(), 4096);
        small.getWriter().print("created 42");
        small.release();
        assertThat(client.toString()).isEqualTo("created 42");
        final BufferedResponse failed = new BufferedResponse(wrapped(), 10);
        failed.getOutputStream().write(new byte[100]);
        assertThat(failed.spilled()).isTrue();
        failed.discard();
        assertThat(failed.spilled()).isFalse();
        assertThat(bodyFiles()).isEqualTo(filesBefore);
    }
}
