package io.github.hibernaterouting.routing.internal.consistency;

/**
 * PostgreSQL WAL positions ({@code pg_lsn}) as unsigned 64-bit longs.
 *
 * <p>Text form is {@code X/Y}, two hexadecimal halves. {@code 0} stands for "unknown" and is behind
 * every real position, which is the safe reading for a replica whose position is not known.
 */
public final class Lsn {
    public static final long UNKNOWN = 0L;

    private Lsn() {}

    /**
     * Parses {@code X/Y}; {@code null} gives {@link #UNKNOWN}.
     *
     * @throws IllegalArgumentException if the text is not a WAL position
     */
    public static long parse(String text) {
        if (text == null) {
            return UNKNOWN;
        }
        final int slash = text.indexOf('/');
        if (slash <= 0 || slash == text.length() - 1 || slash > 8 || text.length() - slash - 1 > 8) {
            throw new IllegalArgumentException("Not a WAL position (expected hex X/Y such as 16/B374D848): " + text);
        }
        try {
            final long high = Long.parseLong(text, 0, slash, 16);
            final long low = Long.parseLong(text, slash + 1, text.length(), 16);
            return (high << 32) | low;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Not a WAL position (expected hex X/Y such as 16/B374D848): " + text, e);
        }
    }

    /** The {@code X/Y} text of a position. */
    public static String format(long lsn) {
        return Long.toHexString(lsn >>> 32).toUpperCase(java.util.Locale.ROOT) + "/"
                + Long.toHexString(lsn & 0xFFFFFFFFL).toUpperCase(java.util.Locale.ROOT);
    }

    /** Whether {@code position} is at or past {@code required}, comparing as unsigned. */
    public static boolean reached(long position, long required) {
        return Long.compareUnsigned(position, required) >= 0;
    }

    /** The later of two positions. */
    public static long max(long a, long b) {
        return Long.compareUnsigned(a, b) >= 0 ? a : b;
    }

    /** Bytes from {@code from} to {@code to}, never negative. */
    public static long distance(long from, long to) {
        return Long.compareUnsigned(to, from) > 0 ? to - from : 0L;
    }
}
