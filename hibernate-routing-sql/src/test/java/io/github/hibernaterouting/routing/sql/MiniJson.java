package io.github.hibernaterouting.routing.sql;

import java.util.LinkedHashMap;
import java.util.Map;

/** Just enough JSON for one-object-per-line corpora: a flat object whose values are strings, numbers, booleans or null. */
final class MiniJson {

    private MiniJson() {}

    /** Parses {@code {"k": v, …}}; non-string values are kept as their literal text, null as Java null. */
    static Map<String, String> parseFlatObject(String json) {
        Map<String, String> out = new LinkedHashMap<>();
        int[] pos = {skipWs(json, 0)};
        expect(json, pos, '{');
        pos[0] = skipWs(json, pos[0]);
        if (json.charAt(pos[0]) == '}') {
            return out;
        }
        while (true) {
            pos[0] = skipWs(json, pos[0]);
            String key = string(json, pos);
            pos[0] = skipWs(json, pos[0]);
            expect(json, pos, ':');
            pos[0] = skipWs(json, pos[0]);
            String value;
            if (json.charAt(pos[0]) == '"') {
                value = string(json, pos);
            } else {
                int s = pos[0];
                while (pos[0] < json.length() && ",} \t\r\n".indexOf(json.charAt(pos[0])) < 0) {
                    pos[0]++;
                }
                value = json.substring(s, pos[0]);
                if (value.equals("null")) {
                    value = null;
                }
            }
            out.put(key, value);
            pos[0] = skipWs(json, pos[0]);
            char c = json.charAt(pos[0]++);
            if (c == '}') {
                return out;
            }
            if (c != ',') {
                throw new IllegalArgumentException("expected ',' or '}' at " + (pos[0] - 1));
            }
        }
    }

    private static String string(String json, int[] pos) {
        expect(json, pos, '"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            char c = json.charAt(pos[0]++);
            if (c == '"') {
                return sb.toString();
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            char e = json.charAt(pos[0]++);
            switch (e) {
                case 'n':
                    sb.append('\n');
                    break;
                case 't':
                    sb.append('\t');
                    break;
                case 'r':
                    sb.append('\r');
                    break;
                case 'b':
                    sb.append('\b');
                    break;
                case 'f':
                    sb.append('\f');
                    break;
                case 'u':
                    sb.append((char) Integer.parseInt(json.substring(pos[0], pos[0] + 4), 16));
                    pos[0] += 4;
                    break;
                default:
                    sb.append(e);
            }
        }
    }

    private static void expect(String json, int[] pos, char c) {
        if (json.charAt(pos[0]) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + pos[0]);
        }
        pos[0]++;
    }

    private static int skipWs(String json, int i) {
        while (i < json.length() && Character.isWhitespace(json.charAt(i))) {
            i++;
        }
        return i;
    }
}
