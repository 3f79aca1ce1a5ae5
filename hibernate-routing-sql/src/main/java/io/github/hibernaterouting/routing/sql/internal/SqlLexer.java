package io.github.hibernaterouting.routing.sql.internal;

import java.util.Arrays;

/**
 * A single-pass tokenizer of PostgreSQL SQL, faithful to the lexical rules of the server's
 * {@code scan.l} where they matter for routing: it must never mistake the inside of a comment,
 * string, quoted identifier or dollar-quoted body for SQL, nor the other way round.
 *
 * <p>Comments and whitespace produce no tokens. A leading {@code /*+ … *&#47;} hint comment is
 * searched for {@code hibernate.routing.strategy=VALUE}. Unterminated comments, literals and
 * quoted identifiers, and unbalanced parentheses, set {@link Tokens#error}; the caller must then
 * treat the SQL as unparseable. Lexing stops there; an unterminated literal or quoted identifier
 * is still one token, running to the end of the text.
 * Assumes {@code standard_conforming_strings = on} (the default since PostgreSQL 9.1): a
 * backslash escapes only inside {@code E'…'} strings.
 *
 * <p>{@link #tokenizeScript} reads a psql script instead of one JDBC statement: a line that starts
 * outside any comment, literal or quoted identifier with a backslash (after spaces or tabs) is a
 * psql meta-command ({@link #PSQL_COMMAND}) up to the end of the line, whatever it contains, and
 * parentheses need not balance.
 */
public final class SqlLexer {

    public static final int WORD = 1; // unquoted identifier or keyword
    public static final int QIDENT = 2; // "quoted identifier" or U&"…"
    public static final int STRING = 3; // any string constant: '', E'', U&'', B'', X'', N'', $tag$…$tag$
    public static final int NUMBER = 4;
    public static final int PARAM = 5; // $1 or JDBC ?
    public static final int OP = 6;
    public static final int LPAREN = 7;
    public static final int RPAREN = 8;
    public static final int LBRACKET = 9;
    public static final int RBRACKET = 10;
    public static final int COMMA = 11;
    public static final int SEMI = 12;
    public static final int DOT = 13;
    public static final int CAST = 14; // ::
    public static final int COLON = 15;
    public static final int PSQL_COMMAND = 16; // \set …, \g …: a psql meta-command line, only from tokenizeScript

    private SqlLexer() {}

    /** The tokens of one SQL statement (or several separated by semicolons), as the server lexes them. */
    public static Tokens tokenize(String sql) {
        return lex(sql, false);
    }

    /**
     * The tokens of a psql script: as {@link #tokenize}, plus {@link #PSQL_COMMAND} tokens for
     * meta-command lines, and unbalanced parentheses are no error (psql sends them on to the server).
     */
    public static Tokens tokenizeScript(String script) {
        return lex(script, true);
    }

    private static Tokens lex(String sql, boolean script) {
        int n = sql.length();
        Tokens t = new Tokens(sql, Math.max(16, n / 4));
        int[] parenStack = new int[16];
        int depth = 0;
        int i = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x0B) {
                i++;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                i = skipLineComment(sql, i + 2);
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int e = skipBlockComment(sql, i);
                if (e < 0) {
                    t.error = "unterminated comment";
                    return t;
                }
                if (t.count == 0 && t.routingHint == null && i + 2 < n && sql.charAt(i + 2) == '+') {
                    t.routingHint = RoutingHintComment.value(sql, i + 3, e - 2);
                }
                i = e;
            } else if (isIdentStart(c)) {
                i = lexWordOrPrefixedLiteral(sql, i, t);
                if (i < 0) {
                    return t;
                }
            } else if (c == '\'') {
                int e = skipQuoted(sql, i + 1, '\'', false);
                if (e < 0) {
                    t.add(STRING, i, n);
                    t.error = "unterminated string literal";
                    return t;
                }
                t.add(STRING, i, e);
                i = e;
            } else if (c == '"') {
                int e = skipQuoted(sql, i + 1, '"', false);
                if (e < 0) {
                    t.add(QIDENT, i, n);
                    t.error = "unterminated quoted identifier";
                    return t;
                }
                t.add(QIDENT, i, e);
                i = e;
            } else if (c == '$') {
                i = lexDollar(sql, i, t);
                if (i < 0) {
                    return t;
                }
            } else if (c >= '0' && c <= '9' || c == '.' && i + 1 < n && isDigit(sql.charAt(i + 1))) {
                i = lexNumber(sql, i, t);
            } else if (c == '(' || c == '[') {
                if (depth == parenStack.length) {
                    parenStack = Arrays.copyOf(parenStack, depth * 2);
                }
                parenStack[depth++] = t.count;
                t.add(c == '(' ? LPAREN : LBRACKET, i, i + 1);
                i++;
            } else if (c == ')' || c == ']') {
                t.add(c == ')' ? RPAREN : RBRACKET, i, i + 1);
                if (depth > 0) {
                    int open = parenStack[--depth];
                    t.match[open] = t.count - 1;
                    t.match[t.count - 1] = open;
                } else if (!script) {
                    t.error = "unbalanced parentheses";
                    return t;
                }
                i++;
            } else if (c == ',') {
                t.add(COMMA, i, ++i);
            } else if (c == ';') {
                t.add(SEMI, i, ++i);
            } else if (c == '.') {
                t.add(DOT, i, ++i);
            } else if (c == ':') {
                if (i + 1 < n && sql.charAt(i + 1) == ':') {
                    t.add(CAST, i, i + 2);
                    i += 2;
                } else {
                    t.add(COLON, i, ++i);
                }
            } else if (c == '?' && !(i + 1 < n && isOperatorChar(sql.charAt(i + 1)))) {
                t.add(PARAM, i, ++i);
            } else if (isOperatorChar(c)) {
                i = lexOperator(sql, i, t);
            } else if (script && c == '\\' && startsLine(sql, i)) {
                int e = sql.indexOf('\n', i);
                e = e < 0 ? n : e;
                t.add(PSQL_COMMAND, i, e);
                i = e;
            } else {
                // Anything else (stray backslash commands, odd punctuation) is not SQL we can prove read-only.
                t.add(OP, i, ++i);
            }
        }
        if (depth != 0 && !script) {
            t.error = "unbalanced parentheses";
        }
        return t;
    }

    /**
     * Whether only spaces and tabs stand between {@code i} and the start of its line. The caller is
     * outside any comment or literal, and none of them ends in a newline, so neither is that line's
     * start.
     */
    private static boolean startsLine(String sql, int i) {
        int j = i - 1;
        while (j >= 0 && (sql.charAt(j) == ' ' || sql.charAt(j) == '\t')) {
            j--;
        }
        return j < 0 || sql.charAt(j) == '\n';
    }

    private static int skipLineComment(String sql, int i) {
        int n = sql.length();
        while (i < n && sql.charAt(i) != '\n' && sql.charAt(i) != '\r') {
            i++;
        }
        return i;
    }

    /** End index just after the matching close of a nested block comment starting at {@code i}, or -1. */
    private static int skipBlockComment(String sql, int i) {
        int n = sql.length();
        int nesting = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                nesting++;
                i += 2;
            } else if (c == '*' && i + 1 < n && sql.charAt(i + 1) == '/') {
                i += 2;
                if (--nesting == 0) {
                    return i;
                }
            } else {
                i++;
            }
        }
        return -1;
    }

    /**
     * End index after the closing quote of a literal whose body starts at {@code i}; a doubled
     * quote is an escaped quote, and with {@code backslashEscapes} a backslash escapes the next char.
     */
    private static int skipQuoted(String sql, int i, char quote, boolean backslashEscapes) {
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (backslashEscapes && c == '\\') {
                i += 2;
            } else if (c == quote) {
                if (i + 1 < n && sql.charAt(i + 1) == quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            } else {
                i++;
            }
        }
        return -1;
    }

    private static int lexWordOrPrefixedLiteral(String sql, int i, Tokens t) {
        int n = sql.length();
        char c = sql.charAt(i);
        if (i + 1 < n) {
            char next = sql.charAt(i + 1);
            char lc = NameTable.lower(c);
            if (next == '\'' && (lc == 'e' || lc == 'b' || lc == 'x' || lc == 'n')) {
                int e = skipQuoted(sql, i + 2, '\'', lc == 'e');
                if (e < 0) {
                    t.add(STRING, i, n);
                    t.error = "unterminated string literal";
                    return -1;
                }
                t.add(STRING, i, e);
                return e;
            }
            if (lc == 'u' && next == '&' && i + 2 < n && (sql.charAt(i + 2) == '\'' || sql.charAt(i + 2) == '"')) {
                char q = sql.charAt(i + 2);
                int e = skipQuoted(sql, i + 3, q, false);
                if (e < 0) {
                    t.add(q == '\'' ? STRING : QIDENT, i, n);
                    t.error = q == '\'' ? "unterminated string literal" : "unterminated quoted identifier";
                    return -1;
                }
                t.add(q == '\'' ? STRING : QIDENT, i, e);
                return e;
            }
        }
        int e = i + 1;
        while (e < n && isIdentPart(sql.charAt(e))) {
            e++;
        }
        t.add(WORD, i, e);
        return e;
    }

    private static int lexDollar(String sql, int i, Tokens t) {
        int n = sql.length();
        int j = i + 1;
        if (j < n && isDigit(sql.charAt(j))) {
            while (j < n && isDigit(sql.charAt(j))) {
                j++;
            }
            t.add(PARAM, i, j);
            return j;
        }
        // $tag$: the tag is an identifier without '$' that does not start with a digit, or empty.
        while (j < n && sql.charAt(j) != '$' && isIdentPart(sql.charAt(j))) {
            j++;
        }
        if (j < n && sql.charAt(j) == '$') {
            int tagLen = j + 1 - i;
            int close = sql.indexOf(sql.substring(i, j + 1), j + 1);
            if (close < 0) {
                t.add(STRING, i, n);
                t.error = "unterminated dollar-quoted string";
                return -1;
            }
            int e = close + tagLen;
            t.add(STRING, i, e);
            return e;
        }
        t.add(OP, i, i + 1);
        return i + 1;
    }

    private static int lexNumber(String sql, int i, Tokens t) {
        int n = sql.length();
        int j = i;
        if (sql.charAt(j) == '0' && j + 1 < n && "xXoObB".indexOf(sql.charAt(j + 1)) >= 0) {
            j += 2;
            while (j < n && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_')) {
                j++;
            }
            t.add(NUMBER, i, j);
            return j;
        }
        while (j < n && (isDigit(sql.charAt(j)) || sql.charAt(j) == '_')) {
            j++;
        }
        // "1..10" is not a number followed by ".10" in PostgreSQL; a lone '.' after digits is.
        if (j < n && sql.charAt(j) == '.' && !(j + 1 < n && sql.charAt(j + 1) == '.')) {
            j++;
            while (j < n && (isDigit(sql.charAt(j)) || sql.charAt(j) == '_')) {
                j++;
            }
        }
        if (j < n && (sql.charAt(j) == 'e' || sql.charAt(j) == 'E')) {
            int k = j + 1;
            if (k < n && (sql.charAt(k) == '+' || sql.charAt(k) == '-')) {
                k++;
            }
            if (k < n && isDigit(sql.charAt(k))) {
                j = k;
                while (j < n && isDigit(sql.charAt(j))) {
                    j++;
                }
            }
        }
        t.add(NUMBER, i, j);
        return j;
    }

    private static int lexOperator(String sql, int i, Tokens t) {
        int n = sql.length();
        int j = i;
        while (j < n && isOperatorChar(sql.charAt(j))) {
            // An operator never swallows the start of a comment, nor a JDBC parameter ("id=?").
            if (j > i && (sql.startsWith("--", j) || sql.startsWith("/*", j) || sql.charAt(j) == '?')) {
                break;
            }
            j++;
        }
        t.add(OP, i, j);
        return j;
    }

    static boolean isIdentStart(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80;
    }

    static boolean isIdentPart(char c) {
        return isIdentStart(c) || isDigit(c) || c == '$';
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isOperatorChar(char c) {
        switch (c) {
            case '+':
            case '-':
            case '*':
            case '/':
            case '<':
            case '>':
            case '=':
            case '~':
            case '!':
            case '@':
            case '#':
            case '%':
            case '^':
            case '&':
            case '|':
            case '`':
            case '?':
                return true;
            default:
                return false;
        }
    }
}
