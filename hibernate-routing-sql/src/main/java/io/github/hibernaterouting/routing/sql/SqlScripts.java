package io.github.hibernaterouting.routing.sql;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.PSQL_COMMAND;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.RPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.SEMI;

import io.github.hibernaterouting.routing.sql.internal.SqlLexer;
import io.github.hibernaterouting.routing.sql.internal.Tokens;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Reads {@code .sql} scripts the way psql does, with the same lexer as {@link SqlClassifier}, so
 * that a script is cut exactly where the classifier would see statement boundaries.
 */
public final class SqlScripts {

    private SqlScripts() {}

    /**
     * The statements of {@code script}, in order, as psql would send them: a statement ends at a
     * semicolon outside parentheses, string literals, quoted identifiers, dollar quotes and
     * comments, or at a psql {@code \g} command ({@code \g}, {@code \gx}, {@code \gset},
     * {@code \gexec}, {@code \gdesc}). Other psql meta-command lines ({@code \set}, {@code \d},
     * {@code \echo}, …) are left out; a backslash starts one only at the start of a line (after
     * spaces or tabs) that begins outside any literal, quoted identifier, dollar quote or comment.
     *
     * <p>Each statement is returned without its semicolon and stripped of surrounding whitespace;
     * comments stay with the statement that follows them, and pieces holding only comments are
     * dropped. An unterminated literal, quoted identifier or comment runs to the end of the script.
     */
    public static List<String> split(String script) {
        Objects.requireNonNull(script, "script");
        final Tokens t = SqlLexer.tokenizeScript(script);
        final List<String> statements = new ArrayList<>();
        final StringBuilder statement = new StringBuilder();
        int copied = 0; // script[0, copied) is in statement or left out
        int depth = 0;
        boolean hasTokens = false;
        for (int i = 0; i < t.count; i++) {
            final int type = t.type[i];
            if (type == PSQL_COMMAND) {
                // The whole line goes: its indentation, the command and its newline.
                statement.append(script, copied, lineStart(script, t.start[i]));
                copied = Math.min(t.end[i] + 1, script.length());
                if (sendsTheBuffer(script, t.start[i], t.end[i])) {
                    add(statements, statement, hasTokens);
                    hasTokens = false;
                    depth = 0;
                }
            } else if (type == SEMI && depth == 0) {
                statement.append(script, copied, t.start[i]);
                copied = t.end[i];
                add(statements, statement, hasTokens);
                hasTokens = false;
            } else {
                hasTokens = true;
                if (type == LPAREN) {
                    depth++;
                } else if (type == RPAREN && depth > 0) {
                    depth--;
                }
            }
        }
        statement.append(script, copied, script.length());
        add(statements, statement, hasTokens);
        return statements;
    }

    private static void add(List<String> statements, StringBuilder statement, boolean hasTokens) {
        if (hasTokens) {
            final String s = statement.toString().strip();
            if (!s.isEmpty()) {
                statements.add(s);
            }
        }
        statement.setLength(0);
    }

    /** Where the line of the psql command at {@code backslash} starts: only spaces or tabs precede it. */
    private static int lineStart(String script, int backslash) {
        int i = backslash;
        while (i > 0 && (script.charAt(i - 1) == ' ' || script.charAt(i - 1) == '\t')) {
            i--;
        }
        return i;
    }

    /** Whether the psql command {@code script[from, to)} is one of the {@code \g} family. */
    private static boolean sendsTheBuffer(String script, int from, int to) {
        int i = from + 1; // after the backslash
        while (i < to && script.charAt(i) <= ' ') {
            i++;
        }
        return i < to && script.charAt(i) == 'g';
    }
}
