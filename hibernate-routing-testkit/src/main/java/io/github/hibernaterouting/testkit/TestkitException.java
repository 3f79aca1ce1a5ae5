package io.github.hibernaterouting.testkit;

/**
 * Thrown when a test server cannot be started, stopped or controlled.
 *
 * <p>Messages name the node that failed and, for servers the kit started itself, the path of
 * its log file followed by the last lines of that log, so a failure is diagnosable from the test
 * report alone.
 */
public final class TestkitException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message. */
    public TestkitException(String message) {
        super(message);
    }

    /** Creates an exception with a message and a cause. */
    public TestkitException(String message, Throwable cause) {
        super(message, cause);
    }
}
