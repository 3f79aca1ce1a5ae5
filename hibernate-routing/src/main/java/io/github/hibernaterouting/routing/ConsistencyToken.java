package io.github.hibernaterouting.routing;

import java.util.Locale;
import java.util.Objects;

/**
 * A position in the primary's write-ahead log that a later read must be at least as fresh as.
 *
 * <p>A caller receives one after a write (the web filter returns it in a response header, a
 * publisher stamps it on a message) and hands it back to ask for a read that sees that write. The
 * text form is opaque to clients ({@code rl1.} followed by 16 hexadecimal digits) and is checked when
 * parsed: a malformed token is rejected, never ignored. Tokens only ever ask for more freshness.
 *
 * <p>Immutable and thread-safe.
 */
public final class ConsistencyToken implements Comparable<ConsistencyToken> {
    private static final String PREFIX = "rl1.";

    private final long position;

    private ConsistencyToken(long position) {
        this.position = position;
    }

    /** The token for a WAL position given as an unsigned 64-bit number. */
    public static ConsistencyToken ofPosition(long position) {
        return new ConsistencyToken(position);
    }

    /**
     * The token for a {@code pg_lsn} value in PostgreSQL's text form ({@code 16/B374D848}), as read
     * from a stamp column with {@code getString}; {@code null} gives {@code null}.
     *
     * @throws IllegalArgumentException if the text is not a WAL position
     */
    public static ConsistencyToken ofLsn(String pgLsn) {
        return pgLsn == null
                ? null
                : new ConsistencyToken(io.github.hibernaterouting.routing.internal.consistency.Lsn.parse(pgLsn.trim()));
    }

    /**
     * Reads a token produced by {@link #toString()}.
     *
     * @throws IllegalArgumentException naming what is wrong, if {@code text} is not a token
     */
    public static ConsistencyToken parse(String text) {
        Objects.requireNonNull(text, "text");
        final String token = text.trim();
        if (!token.startsWith(PREFIX) || token.length() != PREFIX.length() + 16) {
            throw new IllegalArgumentException(
                    "Not a consistency token: expected 'rl1.' followed by 16 hexadecimal digits, "
                            + "as returned after a write, but got '" + abbreviate(token) + "'");
        }
        try {
            return new ConsistencyToken(Long.parseUnsignedLong(token.substring(PREFIX.length()), 16));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "Not a consistency token: '" + abbreviate(token)
                            + "' has characters that are not hexadecimal digits after 'rl1.'",
                    e);
        }
    }

    private static String abbreviate(String text) {
        return text.length() > 40 ? text.substring(0, 40) + "..." : text;
    }

    /** The WAL position, an unsigned 64-bit number (compare with {@link Long#compareUnsigned}). */
    public long position() {
        return position;
    }

    /** The later of this token and {@code other} ({@code null} counts as no requirement). */
    public ConsistencyToken max(ConsistencyToken other) {
        return other == null || compareTo(other) >= 0 ? this : other;
    }

    @Override
    public int compareTo(ConsistencyToken other) {
        return Long.compareUnsigned(position, other.position);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ConsistencyToken token && token.position == position;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(position);
    }

    /** The token's text, for headers and message attributes. */
    @Override
    public String toString() {
        return PREFIX + String.format(Locale.ROOT, "%016x", position);
    }
}
