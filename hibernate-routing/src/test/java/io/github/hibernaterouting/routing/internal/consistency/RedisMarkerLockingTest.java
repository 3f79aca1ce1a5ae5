package io.github.hibernaterouting.routing.internal.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A Redis that accepts connections and never answers (a host that hangs, a stalled proxy) keeps the
 * thread that connects waiting up to the timeout, and every thread that needs the marker meanwhile
 * waits for it. None of them may hold a monitor there: a virtual thread inside {@code synchronized}
 * pins its carrier thread on JDK 21 to 23, so an outage would take every carrier, and with them the
 * application, for the timeout of each attempt.
 */
class RedisMarkerLockingTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @Test
    void connectingToARedisThatNeverAnswers_holdsNoMonitorOfTheLibrary() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            final List<Socket> accepted = new ArrayList<>();
            final Thread acceptor = new Thread(() -> acceptForever(silent, accepted), "silent-redis");
            acceptor.setDaemon(true);
            acceptor.start();
            final AtomicBoolean stop = new AtomicBoolean();
            try (RedisMarker marker = new RedisMarker(
                    "redis://127.0.0.1:" + silent.getLocalPort(), "t", Duration.ofSeconds(11), Duration.ofSeconds(1))) {
                final Thread reader = new Thread(
                        () -> {
                            while (!stop.get()) {
                                try {
                                    marker.read("actor");
                                } catch (RedisMarker.Unavailable expected) {
                                    // Refused fast between attempts, or the attempt timed out: try again.
                                }
                            }
                        },
                        "marker-reader");
                reader.start();
                try {
                    final ThreadInfo connecting = awaitConnecting(reader);
                    assertThat(connecting.getLockedMonitors())
                            .as("monitors held while connecting, at %s", Arrays.toString(connecting.getStackTrace()))
                            .noneMatch(monitor -> monitor.getClassName().startsWith("io.github.hibernaterouting"));
                } finally {
                    stop.set(true);
                    reader.join(DEADLINE.toMillis());
                }
            }
        }
    }

    /** The reader's state once it is inside Lettuce's connect, called from the marker: polled, as it gets there when its attempt is due. */
    private static ThreadInfo awaitConnecting(Thread reader) throws InterruptedException {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            final ThreadInfo info = threads.getThreadInfo(new long[] {reader.getId()}, true, false)[0];
            if (info != null && insideConnect(info.getStackTrace())) {
                return info;
            }
            Thread.sleep(1);
        }
        throw new AssertionError("the reader never reached RedisClient.connect within " + DEADLINE);
    }

    private static boolean insideConnect(StackTraceElement[] stack) {
        boolean lettuceConnect = false;
        for (StackTraceElement frame : stack) {
            if (frame.getClassName().equals("io.lettuce.core.RedisClient")
                    && frame.getMethodName().equals("connect")) {
                lettuceConnect = true;
            }
            if (lettuceConnect && frame.getClassName().equals(RedisMarker.class.getName())) {
                return true;
            }
        }
        return false;
    }

    private static void acceptForever(ServerSocket server, List<Socket> accepted) {
        try {
            while (true) {
                accepted.add(server.accept());
            }
        } catch (IOException closed) {
            accepted.forEach(socket -> {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            });
        }
    }
}
