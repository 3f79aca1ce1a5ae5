package io.github.hibernaterouting.routing.sql.internal;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.CAST;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.NUMBER;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.OP;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.PARAM;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.PSQL_COMMAND;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.QIDENT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.RPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.SEMI;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.STRING;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SqlLexerTest {

    private static List<String> tokens(String sql) {
        return texts(SqlLexer.tokenize(sql));
    }

    private static List<String> scriptTokens(String script) {
        return texts(SqlLexer.tokenizeScript(script));
    }

    private static List<String> texts(Tokens t) {
        assertThat(t.error).as("lexer error for %s", t.sql).isNull();
        List<String> out = new ArrayList<>();
        for (int i = 0; i < t.count; i++) {
            out.add(t.type[i] + ":" + t.text(i));
        }
        return out;
    }

    @Test
    void everyLiteralForm_isOneStringToken() {
        assertThat(tokens("'a''b' E'c\\'d' U&'\\0041' B'01' X'1F' N'n' $$x$$ $t$ y $t$"))
                .allMatch(s -> s.startsWith(STRING + ":"))
                .hasSize(8);
    }

    @Test
    void dollarDigit_isAParameterNotADollarQuote() {
        assertThat(tokens("$1 $22")).containsExactly(PARAM + ":$1", PARAM + ":$22");
    }

    @Test
    void dollarInsideIdentifier_belongsToTheIdentifier() {
        assertThat(tokens("a$b $x$ q $x$")).containsExactly(WORD + ":a$b", STRING + ":$x$ q $x$");
    }

    @Test
    void quotedIdentifiersWithDoubledQuotes() {
        assertThat(tokens("\"se\"\"lect\" U&\"d\\0061\""))
                .containsExactly(QIDENT + ":\"se\"\"lect\"", QIDENT + ":U&\"d\\0061\"");
    }

    @Test
    void commentsAreSkippedAndNest() {
        assertThat(tokens("a /* x /* y */ z */ b -- c\n d")).containsExactly(WORD + ":a", WORD + ":b", WORD + ":d");
    }

    @Test
    void castsNumbersOperatorsAndJdbcParameters() {
        assertThat(tokens("x::int4(1.5e3)<>?;"))
                .containsExactly(
                        WORD + ":x",
                        CAST + ":::",
                        WORD + ":int4",
                        LPAREN + ":(",
                        NUMBER + ":1.5e3",
                        RPAREN + ":)",
                        OP + ":<>",
                        PARAM + ":?",
                        SEMI + ":;");
    }

    @Test
    void operatorStopsBeforeAComment() {
        assertThat(tokens("a+-- c\nb")).containsExactly(WORD + ":a", OP + ":+", WORD + ":b");
    }

    @Test
    void parenthesesAreMatched() {
        Tokens t = SqlLexer.tokenize("f((a), b)");
        assertThat(t.match[1]).isEqualTo(7);
        assertThat(t.match[2]).isEqualTo(4);
    }

    @Test
    void unterminatedOrUnbalanced_setsError() {
        assertThat(SqlLexer.tokenize("'x").error).contains("string");
        assertThat(SqlLexer.tokenize("\"x").error).contains("identifier");
        assertThat(SqlLexer.tokenize("$a$ x").error).contains("dollar");
        assertThat(SqlLexer.tokenize("/* /* */").error).contains("comment");
        assertThat(SqlLexer.tokenize("(()").error).contains("parentheses");
        assertThat(SqlLexer.tokenize(")").error).contains("parentheses");
    }

    @Test
    void routingHint_onlyFromALeadingPlusComment() {
        assertThat(SqlLexer.tokenize("/*+ a=b hibernate.routing.strategy = STALE_READ */ select").routingHint)
                .isEqualTo("STALE_READ");
        assertThat(SqlLexer.tokenize("/* c */ /*+ hibernate.routing.strategy=PRIMARY*/ select").routingHint)
                .isEqualTo("PRIMARY");
        assertThat(SqlLexer.tokenize("select /*+ hibernate.routing.strategy=PRIMARY */").routingHint)
                .isNull();
    }

    @Test
    void unterminatedLiteral_isOneTokenToTheEnd() {
        for (String literal : new String[] {"'a; b", "E'a\\'; b", "\"a; b", "U&\"a; b", "$f$ a; b"}) {
            Tokens t = SqlLexer.tokenize("select " + literal);
            assertThat(t.error).as(literal).startsWith("unterminated");
            assertThat(t.count).as(literal).isEqualTo(2);
            assertThat(t.text(1)).isEqualTo(literal);
        }
    }

    @Test
    void psqlCommandLine_runsToTheEndOfTheLineWhateverItHolds() {
        assertThat(scriptTokens("\\set x 'it''s\n  \\echo it's \"x\r\nselect 1\n\t\\g"))
                .containsExactly(
                        PSQL_COMMAND + ":\\set x 'it''s",
                        PSQL_COMMAND + ":\\echo it's \"x\r",
                        WORD + ":select",
                        NUMBER + ":1",
                        PSQL_COMMAND + ":\\g");
    }

    @Test
    void psqlCommand_onlyWhereALineStartsOutsideCommentsAndLiterals() {
        assertThat(scriptTokens("select 1 \\g\n/* c */ \\d\n-- c\n\\q"))
                .containsExactly(
                        WORD + ":select",
                        NUMBER + ":1",
                        OP + ":\\",
                        WORD + ":g",
                        OP + ":\\",
                        WORD + ":d",
                        PSQL_COMMAND + ":\\q");
        assertThat(scriptTokens("select 'a\n\\set x', \"b\n\\c\", E'\\\n\\d', $$\n\\q$$ /*\n\\x */"))
                .noneMatch(s -> s.startsWith(PSQL_COMMAND + ":"));
    }

    @Test
    void psqlCommand_isNotRecognisedInAStatement() {
        assertThat(tokens("\\set x")).containsExactly(OP + ":\\", WORD + ":set", WORD + ":x");
    }

    @Test
    void scriptParentheses_needNotBalance() {
        Tokens t = SqlLexer.tokenizeScript("a) (b; (c)");
        assertThat(t.error).isNull();
        assertThat(t.match[1]).isEqualTo(-1);
        assertThat(t.match[2]).isEqualTo(-1);
        assertThat(t.match[5]).isEqualTo(7);
    }
}
