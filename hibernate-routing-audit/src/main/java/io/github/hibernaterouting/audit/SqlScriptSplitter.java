package io.github.hibernaterouting.audit;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a {@code .sql} script into statements the way psql does: at semicolons outside string
 * literals, quoted identifiers, dollar quotes, comments and parentheses. Lines that are psql
 * meta-commands ({@code \set}, {@code \d}, …) are dropped; {@code \g} and its variants end the
 * statement in the buffer, as in psql. Comments stay attached to the statement that follows them.
 */
final class SqlScriptSplitter {

    private SqlScriptSplitter() {
    }

    static List<String> split(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int n = script.length();
        int i = 0;
        int depth = 0;
        boolean lineStart = true;
        while (i < n) {
            char c = script.charAt(i);
            if (lineStart) {
                int j = i;
                while (j < n && (script.charAt(j) == ' ' || script.charAt(j) == '\t')) {
                    j++;
                }
                if (j < n && script.charAt(j) == '\\') {
                    int eol = script.indexOf('\n', j);
                    int end = eol < 0 ? n : eol;
                    String command = script.substring(j + 1, end).trim();
                    if (command.startsWith("g")) { // \g, \gx, \gset, \gexec, \gdesc send the buffer
                        flush(cur, out);
                        depth = 0;
                    }
                    i = eol < 0 ? n : eol + 1;
                    continue;
                }
            }
            lineStart = false;
            if (c == '\n') {
                lineStart = true;
                cur.append(c);
                i++;
            } else if (c == '-' && i + 1 < n && script.charAt(i + 1) == '-') {
                int eol = script.indexOf('\n', i);
                int end = eol < 0 ? n : eol;
                cur.append(script, i, end);
                i = end;
            } else if (c == '/' && i + 1 < n && script.charAt(i + 1) == '*') {
                int end = blockCommentEnd(script, i);
                cur.append(script, i, end);
                i = end;
            } else if (c == '\'' || c == '"') {
                boolean backslash = c == '\'' && i > 0 && (script.charAt(i - 1) == 'E' || script.charAt(i - 1) == 'e')
                        && (i < 2 || !Character.isLetterOrDigit(script.charAt(i - 2)) && script.charAt(i - 2) != '_');
                int end = quotedEnd(script, i + 1, c, backslash);
                cur.append(script, i, end);
                i = end;
            } else if (c == '$' && (i == 0 || !isIdentPart(script.charAt(i - 1)))) {
                int tagEnd = dollarTagEnd(script, i);
                if (tagEnd > 0) {
                    String tag = script.substring(i, tagEnd);
                    int close = script.indexOf(tag, tagEnd);
                    int end = close < 0 ? n : close + tag.length();
                    cur.append(script, i, end);
                    i = end;
                } else {
                    cur.append(c);
                    i++;
                }
            } else if (c == '(') {
                depth++;
                cur.append(c);
                i++;
            } else if (c == ')') {
                depth = Math.max(0, depth - 1);
                cur.append(c);
                i++;
            } else if (c == ';' && depth == 0) {
                flush(cur, out);
                i++;
            } else {
                cur.append(c);
                i++;
            }
        }
        flush(cur, out);
        return out;
    }

    private static void flush(StringBuilder cur, List<String> out) {
        String s = cur.toString().strip();
        if (!s.isEmpty() && !isOnlyComments(s)) {
            out.add(s);
        }
        cur.setLength(0);
    }

    private static boolean isOnlyComments(String s) {
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (s.startsWith("--", i)) {
                int eol = s.indexOf('\n', i);
                i = eol < 0 ? n : eol + 1;
            } else if (s.startsWith("/*", i)) {
                i = blockCommentEnd(s, i);
            } else {
                return false;
            }
        }
        return true;
    }

    private static int blockCommentEnd(String s, int i) {
        int nesting = 0;
        int n = s.length();
        while (i < n) {
            if (s.startsWith("/*", i)) {
                nesting++;
                i += 2;
            } else if (s.startsWith("*/", i)) {
                i += 2;
                if (--nesting == 0) {
                    return i;
                }
            } else {
                i++;
            }
        }
        return n;
    }

    private static int quotedEnd(String s, int i, char quote, boolean backslashEscapes) {
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (backslashEscapes && c == '\\') {
                i += 2;
            } else if (c == quote) {
                if (i + 1 < n && s.charAt(i + 1) == quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            } else {
                i++;
            }
        }
        return n;
    }

    /** End of a {@code $tag$} opener at {@code i}, or -1 if this {@code $} is a parameter or operator. */
    private static int dollarTagEnd(String s, int i) {
        int j = i + 1;
        int n = s.length();
        if (j < n && Character.isDigit(s.charAt(j))) {
            return -1;
        }
        while (j < n && s.charAt(j) != '$' && isIdentPart(s.charAt(j))) {
            j++;
        }
        return j < n && s.charAt(j) == '$' ? j + 1 : -1;
    }

    private static boolean isIdentPart(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$' || c >= 0x80;
    }
}
