package io.github.hibernaterouting.routing.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.hibernaterouting.routing.sql.FunctionCatalog.Volatility;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class SqlClassifierTest {

    private final SqlClassifier classifier = SqlClassifier.builtIn();

    // ---- Hibernate 7 generated SQL -------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(
            strings = {
                "select u1_0.id,u1_0.name from users u1_0 where u1_0.id=?",
                "select u1_0.id,u1_0.email,u1_0.name,u1_0.version from users u1_0 where u1_0.email=?",
                "select o1_0.id,o1_0.total,c1_0.id,c1_0.name from orders o1_0 join customers c1_0 on c1_0.id=o1_0.customer_id where o1_0.id=?",
                "select o1_0.id,o1_0.total from orders o1_0 left join order_lines l1_0 on o1_0.id=l1_0.order_id where l1_0.sku in (?,?,?)",
                "select u1_0.id,u1_0.name from users u1_0 order by u1_0.name offset ? rows fetch first ? rows only",
                "select u1_0.id from users u1_0 order by u1_0.id fetch first ? rows only",
                "select u1_0.id from users u1_0 limit ? offset ?",
                "select count(u1_0.id) from users u1_0 where u1_0.active=?",
                "select count(*) from (select distinct u1_0.id from users u1_0) d",
                "select u1_0.id from users u1_0 where exists(select 1 from orders o1_0 where o1_0.user_id=u1_0.id)",
                "select u1_0.id from users u1_0 where u1_0.id=any(?)",
                "select u1_0.id,upper(u1_0.name),coalesce(u1_0.nick,u1_0.name) from users u1_0 where lower(u1_0.email) like ? escape '\\'",
                "select cast(u1_0.created as date),extract(year from u1_0.created) from users u1_0",
                "select u1_0.id from users u1_0 where u1_0.created>current_timestamp - interval '1 day'",
                "select u1_0.id,row_number() over(partition by u1_0.team order by u1_0.score desc) from users u1_0",
                "with recursive tree(id,parent_id,depth) as (select c.id,c.parent_id,0 from category c where c.parent_id is null union all select c.id,c.parent_id,t.depth+1 from category c join tree t on c.parent_id=t.id) select * from tree",
                "with recent as materialized (select * from orders where created > now() - interval '7 days') select count(*) from recent",
                "select p1_0.id,p1_0.price::numeric(10,2) from products p1_0 where p1_0.tags @> array[?]::text[]",
                "select p1_0.data->>'name' from products p1_0 where p1_0.data @> ?::jsonb",
                "select string_agg(t.name, ',' order by t.name) from tags t group by t.owner having count(*) > 1",
                "select u1_0.id from users u1_0 where u1_0.id between ? and ? union all select a1_0.id from admins a1_0",
                "select g.i from generate_series(1, 10) g(i)",
                "select * from unnest(array[1,2,3]) with ordinality as t(v, n)",
                "select * from users u cross join lateral (select * from orders o where o.user_id = u.id limit 3) o(a, b)",
                "select random(), clock_timestamp(), gen_random_uuid(), pg_sleep(0)",
                "select pg_is_in_recovery(), pg_last_wal_replay_lsn()",
                "select now(), current_date, localtimestamp(3), current_timestamp(0)",
                "select version()",
                "select 1",
                "VALUES (1, 'a'), (2, 'b')",
                "TABLE users",
                "SHOW search_path",
                "(select 1) union (select 2)",
                "select pg_catalog.upper(name) from users",
                "select * from t tablesample system (10) repeatable (42)",
                "select x from t where (a, b) overlaps (c, d)",
                "select count(*) filter (where x > 0) from t",
                "select percentile_cont(0.5) within group (order by x) from t",
                "select a from t group by grouping sets ((a), (b)), cube (a, b), rollup (a)",
                "select substring(name from 2 for 3), position('a' in name), trim(both ' ' from name), overlay(name placing 'x' from 1) from t",
                "select x::character varying(10), y::timestamp(3) with time zone, z::bit varying(5) from t",
                "select 1 operator(pg_catalog.+) 2",
                "select xmlelement(name foo, xmlattributes(1 as a)), greatest(1, 2), least(1, 2), nullif(1, 2)",
                "select tsquery('a & b'), int4('1'), text(1)",
                "select nextval_hint from t",
                "select left(name, 2), right(name, 2), format('%s', name) from t",
                "select * from a left join (select 1 as x) b on true natural join (c cross join d)",
                "select * from t where name not like ('a' || 'b') and name ilike ('%x')",
                "select * from t1 join t2 using (id) join (t3 join t4 on t3.id = t4.id) on true",
            })
    void readOnlyQueries_stayOnTheReplica(String sql) {
        assertReplica(sql, Reason.READ_ONLY);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "insert into users (name,email,version,id) values (?,?,?,?)|DML|INSERT",
                "insert into users (name) values (?) returning id|DML|INSERT",
                "update users set name=?,version=? where id=? and version=?|DML|UPDATE",
                "delete from users where id=? and version=?|DML|DELETE",
                "delete from order_lines where order_id=?|DML|DELETE",
                "merge into t using s on t.id = s.id when matched then update set v = s.v|DML|MERGE",
                "truncate table users|DML|TRUNCATE",
                "INSERT INTO archive SELECT * FROM orders WHERE created < now()|DML|INSERT",
                "create table t (id bigint primary key)|DDL|CREATE",
                "alter table users add column age int|DDL|ALTER",
                "drop table if exists users cascade|DDL|DROP",
                "create temporary table tmp as select 1|DDL|CREATE",
                "grant select on users to reader|DDL|GRANT",
                "revoke select on users from reader|DDL|REVOKE",
                "comment on table users is 'people'|DDL|COMMENT",
                "refresh materialized view mv|DDL|REFRESH",
                "vacuum users|UTILITY|VACUUM",
                "analyze users|UTILITY|ANALYZE",
                "cluster users using users_pkey|UTILITY|CLUSTER",
                "reindex table users|UTILITY|REINDEX",
                "checkpoint|UTILITY|CHECKPOINT",
                "listen channel|UTILITY|LISTEN",
                "notify channel, 'hi'|UTILITY|NOTIFY",
                "execute my_plan(1)|UTILITY|EXECUTE",
                "call refresh_totals(1)|CALL|refresh_totals",
                "do $$ begin perform 1; end $$|DO_BLOCK|",
                "copy users from stdin|COPY_FROM|",
                "copy users (id, name) from '/tmp/users.csv' with (format csv)|COPY_FROM|",
                "copy users to '/tmp/out.csv'|UTILITY|COPY TO FILE",
                "lock table users in access exclusive mode|LOCK|",
                "lock users|LOCK|",
                "select nextval('users_seq')|WRITING_FUNCTION|nextval",
                "select setval('users_seq', 100)|WRITING_FUNCTION|setval",
                "select currval('users_seq')|WRITING_FUNCTION|currval",
                "select lastval()|WRITING_FUNCTION|lastval",
                "select pg_catalog.nextval('users_seq')|WRITING_FUNCTION|nextval",
                "select \"nextval\"('users_seq')|WRITING_FUNCTION|nextval",
                "SELECT NEXTVAL('users_seq')|WRITING_FUNCTION|nextval",
                "select id, nextval('s') from t|WRITING_FUNCTION|nextval",
                "select pg_advisory_lock(42)|WRITING_FUNCTION|pg_advisory_lock",
                "select pg_try_advisory_xact_lock(1, 2)|WRITING_FUNCTION|pg_try_advisory_xact_lock",
                "select pg_advisory_unlock_all()|WRITING_FUNCTION|pg_advisory_unlock_all",
                "select pg_advisory_xact_lock_shared(7)|WRITING_FUNCTION|pg_advisory_xact_lock_shared",
                "select pg_notify('c', 'payload')|WRITING_FUNCTION|pg_notify",
                "select set_config('search_path', 'x', false)|WRITING_FUNCTION|set_config",
                "select lo_create(0)|WRITING_FUNCTION|lo_create",
                "select lo_import('/etc/hosts')|WRITING_FUNCTION|lo_import",
                "select lo_unlink(42)|WRITING_FUNCTION|lo_unlink",
                "select lowrite(lo_open(1, 131072), 'x')|WRITING_FUNCTION|lowrite",
                "select lo_from_bytea(0, 'x')|WRITING_FUNCTION|lo_from_bytea",
                "select txid_current()|WRITING_FUNCTION|txid_current",
                "select pg_current_xact_id()|WRITING_FUNCTION|pg_current_xact_id",
                "select pg_current_wal_lsn()|WRITING_FUNCTION|pg_current_wal_lsn",
                "select pg_walfile_name(pg_last_wal_replay_lsn())|WRITING_FUNCTION|pg_walfile_name",
                "select pg_switch_wal()|WRITING_FUNCTION|pg_switch_wal",
                "select pg_create_restore_point('x')|WRITING_FUNCTION|pg_create_restore_point",
                "select pg_terminate_backend(123)|WRITING_FUNCTION|pg_terminate_backend",
                "select pg_cancel_backend(123)|WRITING_FUNCTION|pg_cancel_backend",
                "select pg_stat_reset()|WRITING_FUNCTION|pg_stat_reset",
                "select pg_stat_reset_shared('bgwriter')|WRITING_FUNCTION|pg_stat_reset_shared",
                "select pg_reload_conf()|WRITING_FUNCTION|pg_reload_conf",
                "select pg_promote()|WRITING_FUNCTION|pg_promote",
                "select pg_wal_replay_pause()|WRITING_FUNCTION|pg_wal_replay_pause",
                "select pg_create_logical_replication_slot('s', 'pgoutput')|WRITING_FUNCTION|pg_create_logical_replication_slot",
                "select pg_drop_replication_slot('s')|WRITING_FUNCTION|pg_drop_replication_slot",
                "select pg_logical_emit_message(true, 'p', 'm')|WRITING_FUNCTION|pg_logical_emit_message",
                "select brin_summarize_range('idx', 0)|WRITING_FUNCTION|brin_summarize_range",
                "select query_to_xml('delete from t returning *', true, false, '')|WRITING_FUNCTION|query_to_xml",
                "select my_function(1)|UNKNOWN_FUNCTION|my_function",
                "select app.audit_log('x')|UNKNOWN_FUNCTION|app.audit_log",
                "select * from users u where check_access(u.id)|UNKNOWN_FUNCTION|check_access",
                "select * from make_report(1)|UNKNOWN_FUNCTION|make_report",
                "select \"MyFunc\"(1)|UNKNOWN_FUNCTION|MyFunc",
                "select distinct on (a) nextval('s') from t|WRITING_FUNCTION|nextval",
                "select 1 operator(pg_catalog.+) nextval('s')|WRITING_FUNCTION|nextval",
                "select pg_backup_start('x')|WRITING_FUNCTION|pg_backup_start",
                "select freeze(1)|UNKNOWN_FUNCTION|freeze",
                "select verbose(x) from t|UNKNOWN_FUNCTION|verbose",
                "select reset(1)|UNKNOWN_FUNCTION|reset",
                "select * from a cross join lateral make_rows(a.id) r|UNKNOWN_FUNCTION|make_rows",
                "select * from t where x in (select audit(y) from u)|UNKNOWN_FUNCTION|audit",
                "select case when a then log_it(a) end from t|UNKNOWN_FUNCTION|log_it",
                "select f(1) over (), 2|UNKNOWN_FUNCTION|f",
                "select gin_clean_pending_list('idx')|WRITING_FUNCTION|gin_clean_pending_list",
                "select pg_export_snapshot()|WRITING_FUNCTION|pg_export_snapshot",
            })
    void writesAndUnprovableStatements_goToPrimary(String sql, Reason reason, String detail) {
        assertPrimary(sql, reason, detail);
    }

    // ---- locking clauses -------------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "select u1_0.id,u1_0.version from users u1_0 where u1_0.id=? for update|FOR UPDATE",
                "select u1_0.id from users u1_0 where u1_0.id=? for no key update of u1_0|FOR NO KEY UPDATE",
                "select u1_0.id from users u1_0 where u1_0.id=? for share|FOR SHARE",
                "select * from jobs for key share skip locked|FOR KEY SHARE",
                "select * from jobs where id = ? for update nowait|FOR UPDATE",
                "select * from jobs order by id limit 1 for update skip locked|FOR UPDATE",
                "select * from t for /* sneaky */ update|FOR UPDATE",
            })
    void lockingClause_goesToPrimary(String sql, String detail) {
        assertPrimary(sql, Reason.LOCKING_CLAUSE, detail);
    }

    @Test
    void lockingClauseAcrossLinesAndComments_goesToPrimary() {
        assertPrimary("SELECT * FROM t FOR\n  UPDATE", Reason.LOCKING_CLAUSE, "FOR UPDATE");
        assertPrimary("select * from t for -- why not\n no key update", Reason.LOCKING_CLAUSE, "FOR NO KEY UPDATE");
    }

    @Test
    void writeAfterLineComment_isFound() {
        assertPrimary("-- select\ndelete from t", Reason.DML, "DELETE");
        assertPrimary("select 1 -- x\n; update t set a = 1", Reason.MULTIPLE_STATEMENTS, "DML UPDATE");
    }

    @Test
    void lockingClauseInSubquery_goesToPrimary() {
        assertPrimary(
                "select * from (select * from jobs where state = 'new' for update skip locked) j",
                Reason.LOCKING_CLAUSE,
                "FOR UPDATE");
        assertPrimary("select * from a where a.id in (select id from b for share)", Reason.LOCKING_CLAUSE, "FOR SHARE");
    }

    @Test
    void lockingClauseInCte_goesToPrimary() {
        assertPrimary(
                "with j as (select * from jobs limit 1 for update) select * from j",
                Reason.LOCKING_CLAUSE,
                "FOR UPDATE");
    }

    @Test
    void forReadOnlyAndSubstringFor_stayOnReplica() {
        assertReplica("select substring(name from 1 for 3) from t", Reason.READ_ONLY);
        assertReplica("select * from t for read only", Reason.READ_ONLY);
    }

    // ---- data-modifying CTEs ----------------------------------------------------------------

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "with d as (delete from jobs where done returning *) select count(*) from d|DELETE",
                "with u as (update t set x = 1 returning id) select * from u|UPDATE",
                "with i as (insert into log values (1) returning id) select id from i|INSERT",
                "with a as (select 1), b as (select * from (with c as (insert into t values (1) returning *) select * from c) s) select * from b|INSERT",
                "WITH x AS MATERIALIZED (DELETE FROM t RETURNING *) SELECT * FROM x|DELETE",
                "with m as (merge into t using s on t.id = s.id when matched then delete) select 1|MERGE",
            })
    void dataModifyingCteAtAnyDepth_goesToPrimary(String sql, String verb) {
        assertPrimary(sql, Reason.DATA_MODIFYING_CTE, verb);
    }

    @Test
    void cteFollowedByTopLevelInsert_isDml() {
        assertPrimary("with src as (select * from staging) insert into t select * from src", Reason.DML, "INSERT");
    }

    // ---- SELECT INTO ------------------------------------------------------------------------

    @Test
    void selectInto_goesToPrimary() {
        assertPrimary("select * into new_table from users", Reason.SELECT_INTO, "INTO");
        assertPrimary("SELECT id, name INTO TEMP t FROM users WHERE id < 10", Reason.SELECT_INTO, "INTO");
        assertPrimary("select length(s) into t2 from t group by length(s)", Reason.SELECT_INTO, "INTO");
    }

    @Test
    void insertIntoSelect_isDmlNotSelectInto() {
        assertPrimary("insert into t2 select * from t1", Reason.DML, "INSERT");
    }

    @Test
    void intoInsideStringOrQuotedIdentifier_isNotSelectInto() {
        assertReplica("select 'select a into b' from t", Reason.READ_ONLY);
        assertReplica("select \"into\" from t", Reason.READ_ONLY);
    }

    // ---- EXPLAIN ----------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(
            strings = {
                "explain delete from users where id = 1",
                "EXPLAIN (COSTS OFF) INSERT INTO t VALUES (1)",
                "explain verbose update t set x = 1",
                "explain select * from t for update",
                "explain (analyze false) delete from t",
                "explain (analyze off, costs off) delete from t",
                "explain select nextval('s')",
            })
    void explainWithoutAnalyze_staysOnReplica(String sql) {
        assertReplica(sql, Reason.READ_ONLY);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "explain analyze delete from users where id = 1|DELETE",
                "EXPLAIN (ANALYZE, COSTS OFF) DELETE FROM t|DELETE",
                "explain (costs off, analyze) update t set x = 1|UPDATE",
                "explain (analyze true) insert into t values (1)|INSERT",
                "explain analyse verbose select nextval('s')|nextval",
                "explain analyze select * from t for update|FOR UPDATE",
                "EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF, TIMING OFF) CREATE TABLE x AS SELECT 1|CREATE",
            })
    void explainAnalyzeOfWrite_goesToPrimary(String sql, String detail) {
        assertPrimary(sql, Reason.EXPLAIN_ANALYZE_WRITE, detail);
    }

    @Test
    void explainAnalyzeOfRead_followsTheReadRules() {
        assertReplica("explain analyze select * from users", Reason.READ_ONLY);
        assertReplica("EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM users", Reason.READ_ONLY);
    }

    // ---- lexical traps ----------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(
            strings = {
                "select ';' from t",
                "select 'update' from t",
                "select 'x; delete from users' as s",
                "select $$ ; delete from users $$",
                "select $tag$ it's ; drop table users; $tag$ as body",
                "select $a$ $b$ ; delete $b$ $a$",
                "select /* nested /* delete from t; */ still comment; drop */ 1",
                "select \"select\", \"delete\", \"update\" from t",
                "select \"for\" \"update\" from t",
                "select \"a\"\"b; delete\" from t",
                "select E'\\'; delete from t; --' as x",
                "select e'it\\'s' from t",
                "select U&'\\0041; delete' from t",
                "select U&\"d\\0061ta\" from t",
                "select B'1010', X'FF', N'nat' from t",
                "-- leading comment\nselect 1",
                "/* leading */ /* two */ select 1",
                "  \n\t select 1",
                "select 1 -- ; delete from t",
                "select 1;",
                "select 1;;  ",
                "select $1 from t where a = $2",
                "select ? , ?",
                "select x::text, y::int from t",
                "select 1.5e10, .5, 0x1F, 1_000 from t",
                "select a<>b, a!=b, a||b, a@>b, a->>'k' from t",
                "select a-1 from t",
                "select a*-1/**/ from t",
                "select a from t where b = 'O''Reilly; delete'",
                "select $_$ x $_$",
                "select \"nextval\" from t",
                "select a.nextval from t a",
                "SeLeCt 1",
            })
    void lexicalTraps_doNotHideOrInventStatements(String sql) {
        assertReplica(sql, Reason.READ_ONLY);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "select 'unterminated",
                "select \"unterminated",
                "select $$ unterminated",
                "select 1 /* unterminated",
                "select E'unterminated\\'",
            })
    void unterminatedLiteralOrComment_isUnparseable(String sql) {
        assertThat(classifier.classify(sql).reason()).isEqualTo(Reason.UNPARSEABLE);
        assertThat(classifier.classify(sql).replicaSafe()).isFalse();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "select $x$ ; $x$; delete from t|MULTIPLE_STATEMENTS",
                "select 1; delete from users|MULTIPLE_STATEMENTS",
                "select 1; select nextval('s')|MULTIPLE_STATEMENTS",
                "/* x */ delete /* y */ from t|DML",
                "select E'\\\\'; delete from t|MULTIPLE_STATEMENTS",
            })
    void writesAfterLiteralsAndComments_areFound(String sql, Reason reason) {
        assertThat(classifier.classify(sql).reason()).isEqualTo(reason);
        assertThat(classifier.classify(sql).replicaSafe()).isFalse();
    }

    @Test
    void multipleStatements_nameTheFirstOffender() {
        assertPrimary("select 1; delete from users; select 2", Reason.MULTIPLE_STATEMENTS, "DML DELETE");
        assertPrimary("select 1; copy t from stdin", Reason.MULTIPLE_STATEMENTS, "COPY_FROM");
    }

    @Test
    void multipleReadOnlyStatements_stayOnReplica() {
        assertReplica("select 1; select 2; show work_mem", Reason.READ_ONLY);
        assertReplica("copy (select 1) to stdout; copy (select 2) to stdout; select 3", Reason.READ_ONLY);
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"   ", "-- only a comment", "/* only */", ";", " ; ; "})
    void emptyOrCommentOnly_goesToPrimaryAsEmpty(String sql) {
        Classification c = classifier.classify(sql);
        assertThat(c.reason()).isEqualTo(Reason.EMPTY);
        assertThat(c.replicaSafe()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"frobnicate the database", "42", "'literal'", "\\set x 1", "(select 1"})
    void unknownStatement_isUnparseable(String sql) {
        assertThat(classifier.classify(sql).replicaSafe()).isFalse();
    }

    // ---- routing hints ----------------------------------------------------------------------

    @Test
    void leadingHintComment_isReported() {
        Classification c = classifier.classify("/*+ hibernate.routing.strategy=PRIMARY */ select * from users");
        assertThat(c.routingHint()).isEqualTo("PRIMARY");
        assertThat(c.replicaSafe()).isTrue();
        assertThat(classifier
                        .classify("/*+ other.hint=1 HIBERNATE.ROUTING.STRATEGY = stale_read */ select 1")
                        .routingHint())
                .isEqualTo("stale_read");
        assertThat(classifier
                        .classify("/*+ hibernate.routing.strategy=REPLICA */ delete from t")
                        .routingHint())
                .isEqualTo("REPLICA");
    }

    @Test
    void hintOutsideLeadingPositionOrWithoutPlus_isIgnored() {
        assertThat(classifier
                        .classify("select 1 /*+ hibernate.routing.strategy=PRIMARY */")
                        .routingHint())
                .isNull();
        assertThat(classifier
                        .classify("/* hibernate.routing.strategy=PRIMARY */ select 1")
                        .routingHint())
                .isNull();
        assertThat(classifier
                        .classify("select '/*+ hibernate.routing.strategy=PRIMARY */'")
                        .routingHint())
                .isNull();
        assertThat(classifier.classify("select 1").routingHint()).isNull();
    }

    // ---- session and transaction statements ------------------------------------------------

    @ParameterizedTest
    @ValueSource(
            strings = {
                "set search_path to app, public",
                "SET LOCAL statement_timeout = '5s'",
                "set session work_mem = '64MB'",
                "reset all",
                "reset search_path",
                "set role reader",
                "set session authorization alice",
                "set constraints all deferred",
                "set time zone 'UTC'",
                "deallocate all",
                "fetch next from c",
                "move forward 5 in c",
                "close c",
                "unlisten *",
                "prepare q(int) as select * from t where id = $1",
                "declare c cursor for select * from t",
                "set transaction isolation level repeatable read",
                "set default_transaction_read_only = on",
                "set transaction_isolation = 'read committed'",
            })
    void sessionState_staysOnReplica(String sql) {
        assertReplica(sql, Reason.SESSION_STATE);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "set search_path to app, public|SESSION",
                "SET SESSION work_mem = '64MB'|SESSION",
                "set statement_timeout = 5000|SESSION",
                "set role reader|SESSION",
                "set session authorization alice|SESSION",
                "set session characteristics as transaction isolation level repeatable read|SESSION",
                "set time zone 'UTC'|SESSION",
                "reset all|SESSION",
                "RESET search_path|SESSION",
                "/* comment */ set local statement_timeout = '5s'|TRANSACTION",
                "SET LOCAL search_path = app|TRANSACTION",
                "set transaction isolation level repeatable read|TRANSACTION",
                "set transaction read only|TRANSACTION",
                "set constraints all deferred|TRANSACTION",
                "set local default_transaction_read_only = on|TRANSACTION",
                "select 1; set local work_mem = '1MB'|TRANSACTION",
                "set local work_mem = '1MB'; set work_mem = '2MB'|SESSION",
                "discard all|NONE",
                "deallocate all|NONE",
                "prepare q(int) as select * from t where id = $1|NONE",
                "declare c cursor for select * from t|NONE",
                "begin|NONE",
                "select current_setting('search_path')|NONE",
                "show search_path|NONE",
            })
    void settings_sayHowLongTheyLast(String sql, Classification.SettingScope scope) {
        assertThat(classifier.classify(sql).settingScope()).as(sql).isEqualTo(scope);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "set search_path to app, public|search_path",
                "SET LOCAL Statement_Timeout = '5s'|statement_timeout",
                "set session app.tenant = 'acme'|app.tenant",
                "set \"App\".\"Tenant\" = 'acme'|App.Tenant",
                "set role reader|role",
                "set time zone 'UTC'|time",
                "reset all|all",
                "reset app.tenant|app.tenant",
            })
    void settings_nameTheParameter_neverTheValue(String sql, String name) {
        assertThat(classifier.classify(sql).detail()).as(sql).isEqualTo(name);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "set standard_conforming_strings = off|standard_conforming_strings|SESSION",
                "SET standard_conforming_strings TO on|standard_conforming_strings|SESSION",
                "set session standard_conforming_strings = 'off'|standard_conforming_strings|SESSION",
                "set local standard_conforming_strings to off|standard_conforming_strings|TRANSACTION",
                "Set Standard_Conforming_Strings = DEFAULT|standard_conforming_strings|SESSION",
                "reset standard_conforming_strings|standard_conforming_strings|SESSION",
                "RESET ALL|all|SESSION",
            })
    void standardConformingStrings_isASettingNamedForRouters(
            String sql, String name, Classification.SettingScope scope) {
        // The lexer assumes standard_conforming_strings = on: a router keeps every later statement of
        // a unit that ran one of these on the primary, recognising them by detail().
        Classification c = classifier.classify(sql);
        assertReplica(sql, Reason.SESSION_STATE);
        assertThat(c.detail()).as(sql).isEqualTo(name);
        assertThat(c.settingScope()).as(sql).isEqualTo(scope);
    }

    @Test
    void scriptThatSetsSomething_namesNoParameter() {
        // A router must assume such a script may have set any parameter, standard_conforming_strings too.
        Classification c = classifier.classify("set standard_conforming_strings = off; select 1");
        assertThat(c.settingScope()).isEqualTo(Classification.SettingScope.SESSION);
        assertThat(c.detail()).isNull();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "set session characteristics as transaction read write", "set transaction read write",
                "set transaction isolation level serializable", "set default_transaction_read_only = off",
            })
    void settingsThatNeedThePrimary_areNotCarriedOver(String sql) {
        final Classification c = classifier.classify(sql);
        assertThat(c.replicaSafe()).as(sql).isFalse();
        assertThat(c.settingScope()).as(sql).isEqualTo(Classification.SettingScope.NONE);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "begin",
                "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                "start transaction read only",
                "commit",
                "end",
                "rollback",
                "abort",
                "savepoint s1",
                "release savepoint s1",
                "rollback to savepoint s1",
                "begin transaction isolation level read committed",
            })
    void transactionControl_staysOnReplica(String sql) {
        assertReplica(sql, Reason.TRANSACTION_CONTROL);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "begin isolation level serializable|SERIALIZABLE",
                "start transaction read write|READ WRITE",
                "set transaction isolation level serializable|SERIALIZABLE",
                "set session characteristics as transaction read write|READ WRITE",
                "set default_transaction_isolation = 'serializable'|SERIALIZABLE",
                "set transaction_read_only = off|READ WRITE",
                "set default_transaction_read_only to default|READ WRITE",
                "prepare transaction 'tx1'|PREPARE TRANSACTION",
                "commit prepared 'tx1'|COMMIT PREPARED",
                "rollback prepared 'tx1'|ROLLBACK PREPARED",
            })
    void transactionsAStandbyRefuses_goToPrimary(String sql, String detail) {
        assertPrimary(sql, Reason.PRIMARY_ONLY_TRANSACTION, detail);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "begin|BEGIN",
                "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ|BEGIN",
                "start transaction|BEGIN",
                "begin work|BEGIN",
                "begin isolation level read committed|BEGIN",
                "start transaction read only|BEGIN_READ_ONLY",
                "begin read only|BEGIN_READ_ONLY",
                "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY, DEFERRABLE|BEGIN_READ_ONLY",
                "begin isolation level serializable|BEGIN",
                "begin read only, isolation level serializable|BEGIN",
                "start transaction read write|BEGIN",
                "commit|END",
                "COMMIT WORK|END",
                "end|END",
                "end transaction|END",
                "rollback|END",
                "rollback work|END",
                "abort|END",
                "commit and no chain|END",
                "commit and chain|NONE",
                "rollback work and chain|NONE",
                "savepoint s1|SAVEPOINT",
                "release savepoint s1|SAVEPOINT",
                "release s1|SAVEPOINT",
                "rollback to savepoint s1|SAVEPOINT",
                "rollback to s1|SAVEPOINT",
                "rollback transaction to savepoint s1|SAVEPOINT",
                "ROLLBACK WORK TO s1|SAVEPOINT",
                "commit prepared 'tx'|NONE",
                "rollback prepared 'tx'|NONE",
                "prepare transaction 'tx'|NONE",
                "declare c cursor for select 1|CURSOR_OPEN",
                "DECLARE c BINARY INSENSITIVE NO SCROLL CURSOR WITH HOLD FOR select * from t|CURSOR_OPEN",
                "declare c cursor for select * from t for update|CURSOR_OPEN",
                "fetch next from c|CURSOR_USE",
                "fetch c|CURSOR_USE",
                "fetch 10 in c|CURSOR_USE",
                "FETCH FORWARD ALL FROM c|CURSOR_USE",
                "fetch backward 2 from c|CURSOR_USE",
                "fetch absolute -1 from c|CURSOR_USE",
                "fetch relative +2 in c|CURSOR_USE",
                "fetch prior c|CURSOR_USE",
                "move last in c|CURSOR_USE",
                "move c|CURSOR_USE",
                "close c|CURSOR_CLOSE",
                "close all|CURSOR_CLOSE",
                "CLOSE \"My Cursor\"|CURSOR_CLOSE",
                "select 1|NONE",
                "set search_path = app|NONE",
                "set transaction read only|NONE",
                "show work_mem|NONE",
                "deallocate all|NONE",
                "prepare q as select 1|NONE",
                "explain select 1|NONE",
                "begin; select 1|NONE",
                "select 1; commit|NONE",
                "declare c cursor for select 1; fetch c|NONE",
            })
    void control_tellsRoutersAboutTransactionsAndCursors(String sql, Classification.Control control) {
        assertThat(classifier.classify(sql).control()).as(sql).isEqualTo(control);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "declare c cursor for select 1|c",
                "DECLARE MyCursor SCROLL CURSOR FOR select 1|mycursor",
                "declare \"MyCursor\" cursor for select 1|MyCursor",
                "declare c cursor for select * from t for update|c",
                "fetch next from c|c",
                "FETCH C|c",
                "fetch 10 in \"Big\"|Big",
                "fetch forward all from c|c",
                "fetch absolute -1 from c|c",
                "move last in c|c",
                "fetch next|next",
                "fetch forward|forward",
                "close c|c",
                "CLOSE \"All\"|All",
            })
    void cursorName_isFoldedLikePostgres(String sql, String name) {
        assertThat(classifier.classify(sql).cursorName()).as(sql).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "close all",
                "CLOSE ALL",
                "select 1",
                "begin",
                "fetch 5",
                "declare c cursor for select 1; fetch c"
            })
    void cursorName_isNullForCloseAllAndOtherStatements(String sql) {
        assertThat(classifier.classify(sql).cursorName()).as(sql).isNull();
    }

    @Test
    void control_keepsTheVerdict() {
        Classification serializable = classifier.classify("begin isolation level serializable");
        assertThat(serializable.replicaSafe()).isFalse();
        assertThat(serializable.reason()).isEqualTo(Reason.PRIMARY_ONLY_TRANSACTION);
        assertThat(serializable.detail()).isEqualTo("SERIALIZABLE");
        assertThat(serializable.control()).isEqualTo(Classification.Control.BEGIN);
        Classification forUpdate = classifier.classify("declare c cursor for select * from t for update");
        assertThat(forUpdate.reason()).isEqualTo(Reason.LOCKING_CLAUSE);
        assertThat(forUpdate.detail()).isEqualTo("FOR UPDATE");
        assertThat(forUpdate.control()).isEqualTo(Classification.Control.CURSOR_OPEN);
        assertThat(forUpdate.cursorName()).isEqualTo("c");
        assertReplica("begin read only", Reason.TRANSACTION_CONTROL);
        assertReplica("fetch next from c", Reason.SESSION_STATE);
        assertReplica("close all", Reason.SESSION_STATE);
        assertReplica("declare c cursor for select 1", Reason.SESSION_STATE);
    }

    @Test
    void detailLessControlVerdicts_areSharedInstances() {
        assertThat(classifier.classifyUncached("begin")).isSameAs(classifier.classifyUncached("start transaction"));
        assertThat(classifier.classifyUncached("begin read only"))
                .isSameAs(classifier.classifyUncached("start transaction read only"));
        assertThat(classifier.classifyUncached("commit")).isSameAs(classifier.classifyUncached("rollback"));
        assertThat(classifier.classifyUncached("savepoint a")).isSameAs(classifier.classifyUncached("release b"));
        assertThat(classifier.classifyUncached("close all")).isSameAs(classifier.classifyUncached("CLOSE ALL"));
        assertThat(classifier.classifyUncached("begin")).isNotEqualTo(classifier.classifyUncached("commit"));
        assertThat(classifier.classifyUncached("fetch c")).isEqualTo(classifier.classifyUncached("FETCH NEXT FROM C"));
        assertThat(classifier.classifyUncached("fetch c")).isNotEqualTo(classifier.classifyUncached("fetch d"));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "discard all|ALL",
                "DISCARD PLANS|PLANS",
                "discard sequences|SEQUENCES",
                "discard temp|TEMP",
                "discard temporary|TEMPORARY"
            })
    void discard_resetsTheSessionsReadOnlyDefault_soGoesToPrimary(String sql, String what) {
        assertPrimary(sql, Reason.SESSION_RESET, what);
        assertThat(Reason.SESSION_RESET.replicaSafe()).isFalse();
    }

    @Test
    void prepareOrCursorOverAWrite_goesToPrimary() {
        assertPrimary("prepare ins(int) as insert into t values ($1)", Reason.DML, "INSERT");
        assertPrimary("declare c cursor for select * from t for update", Reason.LOCKING_CLAUSE, "FOR UPDATE");
        assertPrimary("prepare p as select nextval('s')", Reason.WRITING_FUNCTION, "nextval");
    }

    @Test
    void copy_readsGoToReplicaWritesToPrimary() {
        assertReplica("copy users to stdout", Reason.READ_ONLY);
        assertReplica("COPY users (id, name) TO STDOUT WITH (FORMAT csv)", Reason.READ_ONLY);
        assertReplica("copy (select * from users where id = 1) to stdout", Reason.READ_ONLY);
        assertPrimary("copy (select * from t for update) to stdout", Reason.LOCKING_CLAUSE, "FOR UPDATE");
        assertPrimary("copy (delete from t returning *) to stdout", Reason.DML, "DELETE");
        assertPrimary("copy users from stdin", Reason.COPY_FROM, null);
    }

    // ---- JDBC escapes -----------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "select {fn nextval('s')}|WRITING_FUNCTION|nextval",
                "select {fn pg_try_advisory_lock(42)}|WRITING_FUNCTION|pg_try_advisory_lock",
                "SELECT {FN NEXTVAL('s')}|WRITING_FUNCTION|nextval",
                "select {fn pg_catalog.setval('s', 1)}|WRITING_FUNCTION|setval",
                "select {fn \"nextval\"('s')}|WRITING_FUNCTION|nextval",
                "select * from t where id = {fn currval('s')}|WRITING_FUNCTION|currval",
                "select {fn ucase({fn nextval('s')})}|WRITING_FUNCTION|nextval",
                "select {fn my_function(1)}|UNKNOWN_FUNCTION|my_function",
            })
    void jdbcFunctionEscape_isJudgedLikeAPlainCall(String sql, Reason reason, String detail) {
        // pgjdbc sends a {fn name(...)} it does not translate to the server as name(...)
        assertPrimary(sql, reason, detail);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "select {fn ucase(name)}, {fn lcase(name)}, {fn length(name)}, {fn ltrim(name)} from t",
                "select {fn insert(name, 1, 2, 'x')}, {fn left(name, 2)}, {fn right(name, 2)} from t",
                "select {fn truncate(x, 2)}, {fn second(ts)}, {fn char(65)}, {fn locate('a', name)} from t",
                "select {fn curdate()}, {fn curtime()}, {fn ifnull(a, b)}, {fn user()}, {fn database()} from t",
                "select {fn timestampadd(SQL_TSI_DAY, 1, ts)}, {fn timestampdiff(SQL_TSI_DAY, a, b)} from t",
                "select {fn now()}, {fn abs(-1)}, {fn lower(name)} from t",
                "select {fn current_date}",
                "select * from t where d = {d '2024-01-01'} and t = {t '10:00:00'} and ts > {ts '2024-01-01 10:00:00'}",
                "select * from {oj a left outer join b on a.id = b.a_id}",
                "select * from t where name like 'a\\_%' {escape '\\'}",
                "select * from t {limit 10}",
            })
    void jdbcEscapesOfReadOnlySql_stayOnReplica(String sql) {
        assertReplica(sql, Reason.READ_ONLY);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "{call refresh_totals(1)}|refresh_totals",
                "{ call refresh_totals(?, ?) }|refresh_totals",
                "{? = call get_total(?)}|get_total",
                "{?= call get_total(?)}|get_total",
                "{ ? = call get_total() }|get_total",
            })
    void jdbcCallEscape_goesToPrimaryAsACall(String sql, String procedure) {
        assertPrimary(sql, Reason.CALL, procedure);
    }

    @Test
    void jdbcFunctionEscapeWithACommentBeforeItsParenthesis_isNotTranslatedByTheDriver() {
        // pgjdbc takes "ucase /* c */" for the name, does not know it and passes it through: the server
        // calls the user's function ucase.
        FunctionCatalog catalog = (schema, name) -> "ucase".equals(name) ? Volatility.VOLATILE : Volatility.UNKNOWN;
        String sql = "select {fn ucase /* c */ (name)} from t";
        assertPrimaryWith(new SqlClassifier(catalog, 0), sql, Reason.VOLATILE_FUNCTION, "ucase");
        assertPrimary(sql, Reason.UNKNOWN_FUNCTION, "ucase");
        assertReplica("select {fn ucase\n  (name)} from t", Reason.READ_ONLY);
    }

    @Test
    void unknownJdbcEscape_isUnparseable() {
        // pgjdbc reads "{fnnextval(…)}" as {fn nextval(…)}: whatever the catalog says of "fnnextval"
        FunctionCatalog catalog = (schema, name) -> Volatility.STABLE;
        SqlClassifier withCatalog = new SqlClassifier(catalog, 10);
        assertPrimaryWith(withCatalog, "select {fnnextval('s')}", Reason.UNPARSEABLE, "unknown JDBC escape");
        assertPrimaryWith(withCatalog, "select {ojnextval('s')}", Reason.UNPARSEABLE, "unknown JDBC escape");
        assertPrimaryWith(withCatalog, "select {1}", Reason.UNPARSEABLE, "unknown JDBC escape");
    }

    // ---- user functions named like unreserved keywords -------------------------------------

    /** Knows a VOLATILE function for every unreserved keyword the grammar also puts before "(". */
    private static final FunctionCatalog VOLATILE_KEYWORD_FUNCTIONS = (schema, name) -> switch (name) {
        case "next",
                "value",
                "first",
                "rows",
                "range",
                "groups",
                "cube",
                "rollup",
                "sets",
                "by",
                "escape",
                "zone",
                "second",
                "varying",
                "materialized",
                "columns",
                "passing",
                "ordinality",
                "over",
                "filter",
                "set",
                "recursive",
                "nothing",
                "include",
                "repeatable",
                "join",
                "operator" -> Volatility.VOLATILE;
        default -> Volatility.UNKNOWN;
    };

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "select next(1)|next",
                "select value(1)|value",
                "select first(x) from t|first",
                "select rows(1)|rows",
                "select range(1, 2)|range",
                "select groups(1)|groups",
                "select * from t where a = next(1)|next",
                "select 1, range(1)|range",
                "select x from t order by value(x)|value",
                "select cube(1, 2)|cube",
                "select a from t group by a having rollup(a) > 0|rollup",
                "select a, rollup(a) from t group by a|rollup",
                "select sets(1)|sets",
                "select * from t where by(1)|by",
                "select x like escape('%') from t|escape",
                "select zone(1)|zone",
                "select second(1)|second",
                "select varying(1)|varying",
                "select materialized(1)|materialized",
                "select columns(1)|columns",
                "select passing(1)|passing",
                "select ordinality(1)|ordinality",
                "select over(1)|over",
                "select filter(1)|filter",
                "select set(1)|set",
                "select recursive(1)|recursive",
                "select nothing(1)|nothing",
                "select include(1)|include",
                "select repeatable(1)|repeatable",
                "select join(1)|join",
                "select {fn next(1)}|next",
                "select * from t order by a fetch next (next(1)) rows only|next",
                "select * from t fetch first rows(1) rows only|rows",
                "select * from t where x similar to second('a')|second",
                "select count(*) from t group by value(x)|value",
                "select * from t where x = any(select escape(y) from u)|escape",
            })
    void userFunctionNamedLikeAnUnreservedKeyword_isACall(String sql, String name) {
        assertPrimaryWith(new SqlClassifier(VOLATILE_KEYWORD_FUNCTIONS, 0), sql, Reason.VOLATILE_FUNCTION, name);
        assertPrimary(sql, Reason.UNKNOWN_FUNCTION, name);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "select * from t order by a fetch next (5) rows only",
                "select * from t order by a offset (1) rows fetch first (2) rows only",
                "select sum(x) over (order by y rows between unbounded preceding and current row) from t",
                "select sum(x) over (order by y range between unbounded preceding and current row) from t",
                "select sum(x) over (order by y desc rows (1) preceding) from t",
                "select sum(x) over (order by y nulls last groups (1) preceding) from t",
                "select sum(x) over (rows (2) preceding) from t",
                "select sum(x) over w from t window w as (rows (2) preceding)",
                "values (1), (2)",
                "select a, b from t group by cube (a, b)",
                "select a from t group by rollup (a), cube (b)",
                "select a from t group by a, rollup (b)",
                "select a from t group by distinct rollup (a)",
                "select a from t group by grouping sets ((a), cube (a, b), rollup (b))",
                "select a from t group by grouping sets (rollup (a), cube (b))",
                "select * from t where name like 'a' escape ('!')",
                "select * from t where name not like ('%x') and name not ilike ('y%')",
                "select x at time zone ('UTC') from t",
                "select interval '1.5' second (3)",
                "select interval '1:30' minute to second (3)",
                "with c as not materialized (select 1) select * from c",
                "with c as materialized (select 1) select * from c",
                "select * from a left join (b join c on true) on true",
                "select * from a cross join (select 1) b",
                "select xmlexists('//a' passing by value ('<a/>'::xml))",
                "select xmlexists('//a' passing ('<a/>'::xml))",
                "select json_object('a' value (1))",
                "select 1 operator(pg_catalog.+) 2",
            })
    void grammarBeforeAParenthesis_staysReadOnly_evenWithACatalogThatKnowsSuchAFunction(String sql) {
        assertReplica(sql, Reason.READ_ONLY);
        Classification c = new SqlClassifier(VOLATILE_KEYWORD_FUNCTIONS, 0).classify(sql);
        assertThat(c.reason()).as("%s with the catalog: %s", sql, c).isEqualTo(Reason.READ_ONLY);
    }

    // ---- statements whose effect depends on session state -------------------------------------

    @ParameterizedTest
    @ValueSource(
            strings = {
                "select current_schema()",
                "select current_schema",
                "SELECT CURRENT_SCHEMA",
                "select current_schemas(true)",
                "select pg_catalog.current_schema()",
                "select \"current_schema\"()",
                "select * from t where s = current_schema",
                "select (select current_schema())",
                "values (current_schema)",
                "explain select * from pg_namespace where nspname = current_schema()",
                "explain analyze select current_schema()",
                "declare c cursor for select current_schema()",
                "copy (select current_schemas(false)) to stdout",
                "select 1; select current_schema()",
                "select current_schema(); set local work_mem = '1MB'",
            })
    void currentSchema_dependsOnSearchPath(String sql) {
        // With pg_temp first in search_path, current_schema() creates the temporary schema: a write.
        Classification c = classifier.classify(sql);
        assertThat(c.replicaSafe()).as("%s: %s", sql, c).isTrue();
        assertThat(c.dependsOnSearchPath()).as("%s: %s", sql, c).isTrue();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "select 1",
                "select 'current_schema()'",
                "select \"Current_Schema\" from t",
                "select current_user, current_catalog, current_setting('search_path')",
                "show search_path",
                "set search_path = app",
                "begin",
                "select current_schema(), nextval('s')",
                "delete from t where s = current_schema",
                "prepare p as select current_schema()",
            })
    void otherStatements_doNotDependOnSearchPath(String sql) {
        Classification c = classifier.classify(sql);
        assertThat(c.dependsOnSearchPath()).as("%s: %s", sql, c).isFalse();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "create temp table t (id int)|DDL",
                "CREATE TEMPORARY TABLE t (id int) ON COMMIT DROP|DDL",
                "create global temporary table t (id int)|DDL",
                "create local temp table t as select 1|DDL",
                "create temp view v as select 1|DDL",
                "create or replace temp view v as select 1|DDL",
                "create temporary recursive view v (n) as values (1)|DDL",
                "create temp sequence s|DDL",
                "create table pg_temp.t (id int)|DDL",
                "create table \"pg_temp\".t (id int) on commit delete rows|DDL",
                "create function pg_temp.f() returns int language sql as 'select 1'|DDL",
                "create view v as select * from pg_temp_3.t|DDL",
                "select * into temp t from note|SELECT_INTO",
                "select id into temporary table t from note where id = 1|SELECT_INTO",
                "select 1 as n into local temp t|SELECT_INTO",
                "select 1 as n into pg_temp.t|SELECT_INTO",
                "(select 1 as n into temp t)|SELECT_INTO",
                "insert into note values (1); create temp table t (id int)|MULTIPLE_STATEMENTS",
                "/* hint */ create temp table t (id int)|DDL",
            })
    void temporaryObjects_areReportedOnTheirWriteVerdict(String sql, Reason reason) {
        Classification c = classifier.classify(sql);
        assertThat(c.reason()).as("%s: %s", sql, c).isEqualTo(reason);
        assertThat(c.createsTemporaryObject()).as("%s: %s", sql, c).isTrue();
        assertThat(c).as("memoised verdict equals a fresh one").isEqualTo(classifier.classifyUncached(sql));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "create table t (id int)",
                "create unlogged table t (id int)",
                "create view temp as select 1",
                "create table temporary_data (id int)",
                "select * into t from note",
                "insert into temp values (1)",
                "select * from pg_temp.t",
                "select 'create temp table t (id int)'",
                "drop table pg_temp.t",
                "discard temp",
                "do $$ begin end $$",
            })
    void otherStatements_createNoTemporaryObject(String sql) {
        Classification c = classifier.classify(sql);
        assertThat(c.createsTemporaryObject()).as("%s: %s", sql, c).isFalse();
    }

    @Test
    void searchPathDependency_keepsTheVerdictAndSharesIt() {
        Classification c = classifier.classifyUncached("select current_schema()");
        assertThat(c.reason()).isEqualTo(Reason.READ_ONLY);
        assertThat(c.detail()).isNull();
        assertThat(c).isSameAs(classifier.classifyUncached("select current_schemas(true)"));
        assertThat(c).isNotEqualTo(classifier.classifyUncached("select 1"));
        Classification cursor = classifier.classify("declare c cursor for select current_schema()");
        assertThat(cursor.control()).isEqualTo(Classification.Control.CURSOR_OPEN);
        assertThat(cursor.cursorName()).isEqualTo("c");
        assertThat(cursor.detail()).isNull();
    }

    // ---- catalog ----------------------------------------------------------------------------

    @Test
    void catalogStableOrImmutableUserFunction_staysOnReplica() {
        FunctionCatalog catalog = (schema, name) -> switch (name) {
            case "price_with_tax" -> Volatility.IMMUTABLE;
            case "visible_to" -> Volatility.STABLE;
            case "bump_counter" -> Volatility.VOLATILE;
            default -> Volatility.UNKNOWN;
        };
        SqlClassifier withCatalog = new SqlClassifier(catalog, 100);
        assertThat(withCatalog
                        .classify("select price_with_tax(p.price) from products p")
                        .replicaSafe())
                .isTrue();
        assertThat(withCatalog
                        .classify("select * from docs d where visible_to(d.id, ?)")
                        .replicaSafe())
                .isTrue();
        assertPrimaryWith(withCatalog, "select bump_counter(1)", Reason.VOLATILE_FUNCTION, "bump_counter");
        assertPrimaryWith(withCatalog, "select other_fn(1)", Reason.UNKNOWN_FUNCTION, "other_fn");
        assertPrimaryWith(withCatalog, "select nextval('s')", Reason.WRITING_FUNCTION, "nextval");
    }

    @Test
    void catalogSchemaQualifiedLookup_usesTheSchema() {
        FunctionCatalog catalog =
                (schema, name) -> "app".equals(schema) && "f".equals(name) ? Volatility.STABLE : Volatility.UNKNOWN;
        SqlClassifier withCatalog = new SqlClassifier(catalog, 100);
        assertThat(withCatalog.classify("select app.f(1)").replicaSafe()).isTrue();
        assertThat(withCatalog.classify("select other.f(1)").replicaSafe()).isFalse();
    }

    @Test
    void catalogVolatileUserOverloadOfBuiltinName_goesToPrimary() {
        FunctionCatalog catalog = (schema, name) -> "lower".equals(name)
                ? (schema == null ? Volatility.VOLATILE : Volatility.IMMUTABLE)
                : Volatility.UNKNOWN;
        assertPrimaryWith(new SqlClassifier(catalog, 10), "select lower(x) from t", Reason.VOLATILE_FUNCTION, "lower");
    }

    @Test
    void attributeNotationOfAVolatileFunction_isThatCall() {
        // PostgreSQL runs t.audit_row as audit_row(t) when tbl has no column audit_row.
        FunctionCatalog catalog = (schema, name) -> switch (name) {
            case "audit_row", "nextval" -> Volatility.VOLATILE;
            case "full_name" -> Volatility.STABLE;
            default -> Volatility.UNKNOWN;
        };
        SqlClassifier withCatalog = new SqlClassifier(catalog, 0);
        assertPrimaryWith(withCatalog, "select t.audit_row from tbl t", Reason.VOLATILE_FUNCTION, "audit_row");
        assertPrimaryWith(
                withCatalog,
                "select * from tbl t where t.audit_row is not null",
                Reason.VOLATILE_FUNCTION,
                "audit_row");
        assertPrimaryWith(withCatalog, "select (t).audit_row from tbl t", Reason.VOLATILE_FUNCTION, "audit_row");
        assertPrimaryWith(withCatalog, "select app.tbl.audit_row from app.tbl", Reason.VOLATILE_FUNCTION, "audit_row");
        assertPrimaryWith(withCatalog, "select t.\"audit_row\" from tbl t", Reason.VOLATILE_FUNCTION, "audit_row");
        assertPrimaryWith(withCatalog, "select s.nextval from seq s", Reason.WRITING_FUNCTION, "nextval");
        assertThat(withCatalog.classify("select t.full_name, t.id from tbl t").replicaSafe())
                .isTrue();
    }

    @Test
    void attributeNotation_onlyForFunctionsCallableWithOneArgument_andOnlyInExpressions() {
        FunctionCatalog catalog = new FunctionCatalog() {
            @Override
            public Volatility volatility(String schema, String name) {
                return name.equals("audit_row") || name.equals("touch") ? Volatility.VOLATILE : Volatility.UNKNOWN;
            }

            @Override
            public boolean callableWithOneArgument(String schema, String name) {
                return name.equals("audit_row");
            }
        };
        SqlClassifier withCatalog = new SqlClassifier(catalog, 0);
        for (String sql : new String[] {
            "select t.touch from tbl t", // touch(a, b): no one-argument version
            "select t.other from tbl t",
            "select * from app.audit_row",
            "select * from a join app.audit_row r on true",
            "select x::app.audit_row, cast(y as app.audit_row) from t",
            "select x collate app.audit_row from t",
            "table app.audit_row",
            "select audit_row.id from audit_row",
            "select t.audit_row.x from tbl t",
        }) {
            Classification c = withCatalog.classify(sql);
            assertThat(c.replicaSafe()).as("%s: %s", sql, c).isTrue();
        }
        assertPrimaryWith(
                withCatalog, "select extract(year from t.audit_row) from tbl t", Reason.VOLATILE_FUNCTION, "audit_row");
        assertPrimaryWith(
                withCatalog,
                "select * from tbl t where x is distinct from t.audit_row",
                Reason.VOLATILE_FUNCTION,
                "audit_row");
        assertPrimaryWith(withCatalog, "select (t).audit_row.x from tbl t", Reason.VOLATILE_FUNCTION, "audit_row");
        assertPrimaryWith(withCatalog, "select t.arr[1].audit_row from tbl t", Reason.VOLATILE_FUNCTION, "audit_row");
    }

    @Test
    void attributeNotationWithoutACatalog_isAKnownLimit() {
        // Nothing tells a column from a function without a catalog: t.audit_row is read as a column.
        assertReplica("select t.audit_row from tbl t", Reason.READ_ONLY);
        assertReplica("select s.nextval from seq s", Reason.READ_ONLY);
    }

    @Test
    void volatileBuiltinNotOnTheHarmlessList_goesToPrimary() {
        assertPrimary(
                "select pg_log_backend_memory_contexts(1)", Reason.WRITING_FUNCTION, "pg_log_backend_memory_contexts");
        assertPrimary("select currtid2('t', '(0,1)')", Reason.VOLATILE_FUNCTION, "currtid2");
    }

    // ---- memo and robustness ----------------------------------------------------------------

    @Test
    void memoisedVerdict_isTheSameInstanceAndEqualToUncached() {
        String sql = "select u1_0.id from users u1_0 where u1_0.id=?";
        Classification first = classifier.classify(sql);
        assertThat(classifier.classify(sql)).isSameAs(first);
        assertThat(classifier.classifyUncached(sql)).isEqualTo(first);
        assertThat(first).isSameAs(Classification.of(Reason.READ_ONLY));
    }

    @Test
    void zeroSizedMemo_stillClassifies() {
        SqlClassifier noMemo = new SqlClassifier(FunctionCatalog.NONE, 0);
        assertThat(noMemo.classify("select 1").replicaSafe()).isTrue();
        assertThat(noMemo.classify("delete from t").replicaSafe()).isFalse();
    }

    @Test
    void concurrentClassification_isConsistent() throws Exception {
        SqlClassifier shared = new SqlClassifier(FunctionCatalog.NONE, 64);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                int n = i % 100;
                results.add(pool.submit(() -> shared.classify("select " + n).replicaSafe()
                        && !shared.classify("delete from t where id = " + n).replicaSafe()));
            }
            for (Future<Boolean> r : results) {
                assertThat(r.get()).isTrue();
            }
        } finally {
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void hugeOrPathologicalInput_neverThrows() {
        StringBuilder deep = new StringBuilder("select ");
        for (int i = 0; i < 5000; i++) {
            deep.append('(');
        }
        deep.append('1');
        for (int i = 0; i < 5000; i++) {
            deep.append(')');
        }
        assertThat(classifier.classify(deep.toString()).replicaSafe()).isTrue();
        assertThat(classifier.classify("select ))) from (((").replicaSafe()).isFalse();
        assertThat(classifier.classify("explain (analyze").replicaSafe()).isFalse();
        assertThat(classifier.classify("copy (select 1").replicaSafe()).isFalse();
        assertThat(classifier.classify("prepare p (int").replicaSafe()).isFalse();
        assertThat(classifier.classify("\u0000\uffff").replicaSafe()).isFalse();
    }

    @Test
    void constructor_rejectsBadArguments() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new SqlClassifier(null, 1))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("FunctionCatalog.NONE");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new SqlClassifier(FunctionCatalog.NONE, -1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private void assertReplica(String sql, Reason reason) {
        Classification c = classifier.classify(sql);
        assertThat(c.replicaSafe()).as("replicaSafe of %s (%s)", sql, c).isTrue();
        assertThat(c.reason()).as("reason of %s", sql).isEqualTo(reason);
    }

    private void assertPrimary(String sql, Reason reason, String detail) {
        assertPrimaryWith(classifier, sql, reason, detail);
    }

    private static void assertPrimaryWith(SqlClassifier classifier, String sql, Reason reason, String detail) {
        Classification c = classifier.classify(sql);
        assertThat(c.replicaSafe()).as("replicaSafe of %s (%s)", sql, c).isFalse();
        assertThat(c.reason()).as("reason of %s", sql).isEqualTo(reason);
        assertThat(c.detail()).as("detail of %s", sql).isEqualTo(detail);
    }
}
