package io.github.hibernaterouting.routing.sql.internal;

/**
 * An immutable open-addressing table from lower-case ASCII names to small int values, looked up
 * directly on a region of the SQL text with ASCII case folding, so that keyword and function
 * lookups neither lower-case nor copy the statement.
 */
public final class NameTable {

    public static final int ABSENT = -1;

    private final String[] keys;
    private final int[] values;
    private final int mask;

    /** {@code names[i]} maps to {@code vals[i]}; names must already be lower case. */
    public NameTable(String[] names, int[] vals) {
        int capacity = Integer.highestOneBit(Math.max(4, names.length * 3)) << 1;
        keys = new String[capacity];
        values = new int[capacity];
        mask = capacity - 1;
        for (int i = 0; i < names.length; i++) {
            String name = names[i];
            int slot = hash(name, 0, name.length()) & mask;
            while (keys[slot] != null && !keys[slot].equals(name)) {
                slot = (slot + 1) & mask;
            }
            keys[slot] = name;
            values[slot] = vals[i];
        }
    }

    /** The value for {@code text[start, end)} compared ASCII-case-insensitively, or {@link #ABSENT}. */
    public int get(CharSequence text, int start, int end) {
        int slot = hash(text, start, end) & mask;
        int len = end - start;
        String key;
        while ((key = keys[slot]) != null) {
            if (key.length() == len && regionEqualsIgnoreAsciiCase(key, text, start)) {
                return values[slot];
            }
            slot = (slot + 1) & mask;
        }
        return ABSENT;
    }

    /** The value for {@code name}, exactly as given (for quoted identifiers), or {@link #ABSENT}. */
    public int getExact(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                return ABSENT; // keys are lower case; "NEXTVAL" is another function than nextval
            }
        }
        return get(name, 0, name.length());
    }

    private static boolean regionEqualsIgnoreAsciiCase(String key, CharSequence text, int start) {
        for (int i = 0; i < key.length(); i++) {
            if (lower(text.charAt(start + i)) != key.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    public static char lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
    }

    private static int hash(CharSequence text, int start, int end) {
        int h = 0;
        for (int i = start; i < end; i++) {
            h = 31 * h + lower(text.charAt(i));
        }
        return h ^ (h >>> 16);
    }
}
