package io.github.hibernaterouting.routing.sql.internal;

import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.CAST;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.LPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.NUMBER;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.OP;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.PARAM;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.QIDENT;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.RPAREN;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.SEMI;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.STRING;
import static io.github.hibernaterouting.routing.sql.internal.SqlLexer.WORD;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.sql.internal.SqlLexer.Tokens;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SqlLexerTest {

    private static List<String> tokens(String sql) {
        Tokens t = SqlLexer.tokenize(sql);
        assertThat(t.error).as("lexer error for %s", sql).isNull();
        List<String> out = new ArrayList<>();
        for (int i = 0; i < t.count; i++) {
            out.add(t.type[i] + ":" + t.text(i));
        }
        return out;
    }

    @Test
    void everyLiteralForm_isOneStringToken() {
        assertThat(tokens("'a''b' E'c\\'d' U&'\\0041' B'01' X'1F' N'n' $$x$$ $t$ y $t$"))
                .allMatch(s -> s.startsWith(STRING + ":")).hasSize(8);
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
        assertThat(tokens("\"se\"\"lect\" U&\"d\\0061\"")).containsExactly(QIDENT + ":\"se\"\"lect\"", QIDENT + ":U&\"d\\0061\"");
    }

    @Test
    void commentsAreSkippedAndNest() {
        assertThat(tokens("a /* x /* y */ z */ b -- c\n d")).containsExactly(WORD + ":a", WORD + ":b", WORD + ":d");
    }

    @Test
    void castsNumbersOperatorsAndJdbcParameters() {
        assertThat(tokens("x::int4(1.5e3)<>?;")).containsExactly(WORD + ":x", CAST + ":::", WORD + ":int4",
                LPAREN + ":(", NUMBER + ":1.5e3", RPAREN + ":)", OP + ":<>", PARAM + ":?", SEMI + ":;");
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
        assertThat(SqlLexer.tokenize("select /*+ hibernate.routing.strategy=PRIMARY */").routingHint).isNull();
    }
}
