package io.github.hibernaterouting.routing.sql.internal;

/**
 * Reads the routing hint of a leading {@code /*+ … *&#47;} comment, which an application writes
 * to pick a routing strategy for one statement; the classifier passes it on without interpreting it.
 */
final class RoutingHintComment {

    private static final String HINT_KEY = "hibernate.routing.strategy";

    private RoutingHintComment() {}

    /**
     * The value of {@code hibernate.routing.strategy=VALUE} in {@code sql[from, to)}, the body of a
     * leading hint comment: the text after {@code =} up to whitespace, {@code ,}, {@code ;} or
     * {@code )}; null if there is none.
     */
    static String value(String sql, int from, int to) {
        int limit = to - HINT_KEY.length();
        for (int i = from; i <= limit; i++) {
            if (sql.regionMatches(true, i, HINT_KEY, 0, HINT_KEY.length())) {
                int j = i + HINT_KEY.length();
                while (j < to && Character.isWhitespace(sql.charAt(j))) {
                    j++;
                }
                if (j >= to || sql.charAt(j) != '=') {
                    continue;
                }
                j++;
                while (j < to && Character.isWhitespace(sql.charAt(j))) {
                    j++;
                }
                int s = j;
                while (j < to
                        && !Character.isWhitespace(sql.charAt(j))
                        && sql.charAt(j) != ','
                        && sql.charAt(j) != ';'
                        && sql.charAt(j) != ')') {
                    j++;
                }
                return j > s ? sql.substring(s, j) : null;
            }
        }
        return null;
    }
}
