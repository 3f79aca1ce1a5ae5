package io.github.hibernaterouting.routing.sql;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SqlScriptsTest {

    @Test
    void splitsAtSemicolons() {
        assertThat(SqlScripts.split("select 1; select 2;\nselect 3"))
                .containsExactly("select 1", "select 2", "select 3");
    }

    @Test
    void semicolonsInsideLiteralsIdentifiersAndComments_doNotSplit() {
        String script = "select ';' as a, \"x;y\" from t; -- c; d\nselect /* ; /* nested ; */ ; */ 2;"
                + "select E'\\';' ; select $$ ; $$; select $f$ a;b $f$";
        assertThat(SqlScripts.split(script))
                .containsExactly(
                        "select ';' as a, \"x;y\" from t",
                        "-- c; d\nselect /* ; /* nested ; */ ; */ 2",
                        "select E'\\';'",
                        "select $$ ; $$",
                        "select $f$ a;b $f$");
    }

    @Test
    void functionBodyInDollarQuotes_staysOneStatement() {
        String script =
                "create function f() returns int as $body$\nbegin\n  return 1;\nend;\n$body$ language plpgsql;\nselect f();";
        assertThat(SqlScripts.split(script)).hasSize(2).last().isEqualTo("select f()");
    }

    @Test
    void dollarParameter_isNotADollarQuote() {
        assertThat(SqlScripts.split("prepare p as select $1; execute p(1);"))
                .containsExactly("prepare p as select $1", "execute p(1)");
    }

    @Test
    void psqlBackslashCommandLines_areSkipped() {
        String script = "\\set ON_ERROR_STOP 1\n\\d users\nselect 1;\n  \\echo hi\nselect 2;\n";
        assertThat(SqlScripts.split(script)).containsExactly("select 1", "select 2");
    }

    @Test
    void gsetAndG_endTheStatementLikeASemicolon() {
        assertThat(SqlScripts.split("select 1 as x\n\\gset\nselect :x\n\\g\n"))
                .containsExactly("select 1 as x", "select :x");
    }

    @Test
    void backslashInsideAStringSpanningLines_isNotACommand() {
        assertThat(SqlScripts.split("select 'a\n\\set x' ;")).containsExactly("select 'a\n\\set x'");
    }

    @Test
    void commentOnlyAndEmptyPieces_areDropped() {
        assertThat(SqlScripts.split(";;\n-- just a comment\n;/* x */;")).isEmpty();
    }

    @Test
    void semicolonInsideParentheses_doesNotSplit() {
        assertThat(SqlScripts.split("select (1; 2); select 3")).containsExactly("select (1; 2)", "select 3");
    }

    @Test
    void psqlCommandArguments_areNotReadAsSql() {
        assertThat(SqlScripts.split("\\echo it's\nselect 1;\n\\set q 'x\nselect 2;\n\\! echo \"$HOME\nselect 3"))
                .containsExactly("select 1", "select 2", "select 3");
    }

    @Test
    void psqlCommandLineInsideAStatement_isLeftOutWithItsIndentation() {
        assertThat(SqlScripts.split("select\n  \\echo hi\n1;")).containsExactly("select\n1");
    }

    @Test
    void backslashAfterSqlOnTheSameLine_staysInTheStatement() {
        assertThat(SqlScripts.split("select 1 \\x;\n/* c */ \\d t;")).containsExactly("select 1 \\x", "/* c */ \\d t");
    }

    @Test
    void gSendsTheBufferEvenInsideParentheses() {
        assertThat(SqlScripts.split("select (1\n\\g\nselect 2; select 3"))
                .containsExactly("select (1", "select 2", "select 3");
    }

    @Test
    void unterminatedLiteralsAndComments_runToTheEnd() {
        assertThat(SqlScripts.split("select 1; select 'a; b")).containsExactly("select 1", "select 'a; b");
        assertThat(SqlScripts.split("select 1; select $f$ a;\n\\q")).containsExactly("select 1", "select $f$ a;\n\\q");
        assertThat(SqlScripts.split("select 1 /* a; b")).containsExactly("select 1 /* a; b");
        assertThat(SqlScripts.split("select 1; /* a; b")).containsExactly("select 1");
    }

    @Test
    void unbalancedClosingParenthesis_doesNotStopTheSplitting() {
        assertThat(SqlScripts.split("select 1); select 2")).containsExactly("select 1)", "select 2");
    }

    @Test
    void boundariesFollowTheServersLexer() {
        // A line comment ends at a carriage return too; a dollar quote may follow another directly.
        assertThat(SqlScripts.split("-- c\rselect 1; select $a$x$a$$b$;$b$;"))
                .containsExactly("-- c\rselect 1", "select $a$x$a$$b$;$b$");
    }
}
