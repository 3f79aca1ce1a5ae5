package io.github.hibernaterouting.routing;

import java.util.Locale;
import java.util.Objects;

/**
 * A position in the primary's write-ahead log that a later read must be at least as fresh as.
 *
 * <p>A caller receives one after a write (the web filter returns it in a response header, a
 * publisher stamps it on a message) and hands it back to ask for a read that sees that write. The
 * text form is opaque to clients ({@code rl1.} followed by 16 hexadecimal digits) and is checked when
 * parsed: a malformed token is rejected, never ignored, and so is a position with the top bit set,
 * which no PostgreSQL WAL reaches (the library keeps such values for itself). Tokens only ever ask
 * for more freshness; a token from outside may still be ahead of every position the primary has
 * reached, which only the primary can tell: {@link ReadYourWrites#checkToken} asks it.
 *
 * <p>Immutable and thread-safe.
 */
public final class ConsistencyToken implements Comparable<ConsistencyToken> {
    private static final String PREFIX = "rl1.";
    private static final String TOP_BIT =
            "its position has the top bit set, which no PostgreSQL WAL reaches, so no write returned it";

    private final long position;

    private ConsistencyToken(long position) {
        if (position < 0) {
            throw new InvalidConsistencyTokenException(String.format(Locale.ROOT, PREFIX + "%016x", position), TOP_BIT);
        }
        this.position = position;
    }

    /**
     * The token for a WAL position given as an unsigned 64-bit number.
     *
     * @throws IllegalArgumentException if the top bit is set: no WAL reaches such a position
     */
    public static ConsistencyToken ofPosition(long position) {
        return new ConsistencyToken(position);
    }

    /**
     * The token for a {@code pg_lsn} value in PostgreSQL's text form ({@code 16/B374D848}), as read
     * from a stamp column with {@code getString}; {@code null} gives {@code null}.
     *
     * @throws IllegalArgumentException if the text is not a WAL position, or one with the top bit set
     */
    public static ConsistencyToken ofLsn(String pgLsn) {
        return pgLsn == null
                ? null
                : new ConsistencyToken(io.github.hibernaterouting.routing.internal.consistency.Lsn.parse(pgLsn.trim()));
    }

    /**
     * Reads a token produced by {@link #toString()}.
     *
     * @throws InvalidConsistencyTokenException naming what is wrong, if {@code text} is not a token
     *     or its position has the top bit set
     */
    public static ConsistencyToken parse(String text) {
        Objects.requireNonNull(text, "text");
        final String token = text.trim();
        final String expected = "expected 'rl1.' followed by 16 hexadecimal digits, as returned after a write";
        if (!token.startsWith(PREFIX) || token.length() != PREFIX.length() + 16) {
            throw new InvalidConsistencyTokenException(abbreviate(token), expected);
        }
        final long position;
        try {
            position = Long.parseUnsignedLong(token.substring(PREFIX.length()), 16);
        } catch (NumberFormatException e) {
            throw new InvalidConsistencyTokenException(abbreviate(token), expected);
        }
        return new ConsistencyToken(position);
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
