package io.github.hibernaterouting.routing.sql.internal;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;

import java.util.Arrays;

/**
 * The token stream of one SQL string, as {@link SqlLexer} produces it: parallel arrays indexed by
 * token (types are {@code SqlLexer}'s constants), no per-token objects.
 */
public final class Tokens {
    public final String sql;
    public int count;
    public int[] type;
    public int[] start;
    public int[] end;
    /**
     * For a parenthesis or bracket, the index of its partner (always set unless {@link #error});
     * -1 for an unpaired one in a script.
     */
    public int[] match;

    public String error;
    public String routingHint;

    Tokens(String sql, int capacity) {
        this.sql = sql;
        type = new int[capacity];
        start = new int[capacity];
        end = new int[capacity];
        match = new int[capacity];
    }

    void add(int t, int s, int e) {
        if (count == type.length) {
            int n = count * 2;
            type = Arrays.copyOf(type, n);
            start = Arrays.copyOf(start, n);
            end = Arrays.copyOf(end, n);
            match = Arrays.copyOf(match, n);
        }
        type[count] = t;
        start[count] = s;
        end[count] = e;
        match[count] = -1;
        count++;
    }

    /** Whether token {@code i} is an unquoted word equal (ASCII-case-insensitively) to lower-case {@code kw}. */
    public boolean is(int i, String kw) {
        if (i < 0 || i >= count || type[i] != WORD || end[i] - start[i] != kw.length()) {
            return false;
        }
        int s = start[i];
        for (int k = 0; k < kw.length(); k++) {
            if (NameTable.lower(sql.charAt(s + k)) != kw.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    public int type(int i) {
        return i >= 0 && i < count ? type[i] : 0;
    }

    public String text(int i) {
        return sql.substring(start[i], end[i]);
    }
}
