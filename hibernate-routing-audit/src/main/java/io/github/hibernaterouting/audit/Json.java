package io.github.hibernaterouting.audit;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A minimal JSON reader for JSON Lines input: parses one object and returns its top-level members,
 * with strings decoded, numbers, booleans and null as their literal text, and nested values skipped.
 */
final class Json {

    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    static Map<String, String> topLevelMembers(String json) {
        Json p = new Json(json);
        p.ws();
        Map<String, String> out = new LinkedHashMap<>();
        p.expect('{');
        p.ws();
        if (p.peek() == '}') {
            p.i++;
            return out;
        }
        while (true) {
            p.ws();
            String key = p.string();
            p.ws();
            p.expect(':');
            p.ws();
            out.put(key, p.value());
            p.ws();
            char c = p.next();
            if (c == '}') {
                break;
            }
            if (c != ',') {
                throw p.error("expected ',' or '}'");
            }
        }
        p.ws();
        if (p.i != p.s.length()) {
            throw p.error("trailing characters after the object");
        }
        return out;
    }

    /** Returns a scalar's text (null for JSON null), or "" after skipping an object or array. */
    private String value() {
        char c = peek();
        if (c == '"') {
            return string();
        }
        if (c == '{' || c == '[') {
            skipComposite();
            return "";
        }
        int start = i;
        while (i < s.length() && ",}] \t\r\n".indexOf(s.charAt(i)) < 0) {
            i++;
        }
        String lit = s.substring(start, i);
        if (lit.isEmpty()) {
            throw error("expected a value");
        }
        return lit.equals("null") ? null : lit;
    }

    private void skipComposite() {
        int depth = 0;
        do {
            char c = peek();
            if (c == '"') {
                string();
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
            }
            i++;
        } while (depth > 0);
    }

    private String string() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '"') {
                return sb.toString();
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            char e = next();
            switch (e) {
                case 'n' -> sb.append('\n');
                case 't' -> sb.append('\t');
                case 'r' -> sb.append('\r');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'u' -> {
                    if (i + 4 > s.length()) {
                        throw error("truncated \\u escape");
                    }
                    sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    i += 4;
                }
                default -> sb.append(e);
            }
        }
    }

    private void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }

    private char peek() {
        if (i >= s.length()) {
            throw error("unexpected end of line");
        }
        return s.charAt(i);
    }

    private char next() {
        char c = peek();
        i++;
        return c;
    }

    private void expect(char c) {
        if (next() != c) {
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at column " + (i + 1));
    }
}
