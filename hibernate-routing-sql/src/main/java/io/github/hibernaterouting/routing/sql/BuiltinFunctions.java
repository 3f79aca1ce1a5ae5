package io.github.hibernaterouting.routing.sql;

import io.github.hibernaterouting.routing.sql.internal.NameTable;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What the classifier knows about PostgreSQL without asking a database: the volatility of every
 * {@code pg_catalog} function and the keyword categories, both generated from a real server
 * ({@code generate-builtin-functions.sh} next to the resources), plus two hand-kept lists.
 *
 * <p>Policy, in order: a function on the <em>writer</em> list always needs the primary (it writes,
 * assigns a transaction id, takes a lock or session-bound state, signals other backends, or fails
 * during recovery) — this list wins over volatility, since e.g. {@code txid_current} is only STABLE.
 * IMMUTABLE and STABLE built-ins are read-only: PostgreSQL forbids them from writing. A VOLATILE
 * built-in is read-only only if it is on the <em>harmless</em> allowlist (random values, clocks,
 * sleeps, size and status probes that a standby answers); any other volatile built-in, including
 * ones a future server version adds, goes to the primary. An allowlist rather than a denylist is the
 * safe default: forgetting a harmless function costs an offload, forgetting a writer costs an error.
 */
final class BuiltinFunctions {

    static final int IMMUTABLE = 1;
    static final int STABLE = 2;
    static final int VOLATILE = 3;

    static final int KW_UNRESERVED = 1;
    static final int KW_COLUMN_NAME = 2;
    static final int KW_TYPE_FUNC_NAME = 3;
    static final int KW_RESERVED = 4;

    /** Writers known by exact name; prefixes below catch whole families, including future members. */
    private static final String[] WRITERS = {
        "nextval",
        "setval",
        "currval",
        "lastval",
        "pg_notify",
        "set_config",
        "lo_create",
        "lo_creat",
        "lo_import",
        "lo_export",
        "lo_unlink",
        "lowrite",
        "lo_put",
        "lo_truncate",
        "lo_truncate64",
        "lo_from_bytea",
        "lo_open",
        "lo_close",
        "lo_lseek",
        "lo_lseek64",
        "lo_tell",
        "lo_tell64",
        "loread",
        "txid_current",
        "pg_current_xact_id",
        "pg_switch_wal",
        "pg_switch_xlog",
        "pg_create_restore_point",
        "pg_current_wal_lsn",
        "pg_current_wal_insert_lsn",
        "pg_current_wal_flush_lsn",
        "pg_current_xlog_location",
        "pg_current_xlog_insert_location",
        "pg_current_xlog_flush_location",
        // IMMUTABLE or not, these refuse to run during recovery.
        "pg_walfile_name",
        "pg_walfile_name_offset",
        "pg_xlogfile_name",
        "pg_xlogfile_name_offset",
        "pg_log_standby_snapshot",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_rotate_logfile_old",
        "pg_promote",
        "pg_wal_replay_pause",
        "pg_wal_replay_resume",
        "pg_xlog_replay_pause",
        "pg_xlog_replay_resume",
        "pg_log_backend_memory_contexts",
        "pg_logical_emit_message",
        "pg_logical_slot_get_changes",
        "pg_logical_slot_get_binary_changes",
        "pg_logical_slot_peek_changes",
        "pg_logical_slot_peek_binary_changes",
        "pg_replication_slot_advance",
        "pg_replication_origin_advance",
        "pg_replication_origin_create",
        "pg_replication_origin_drop",
        "pg_replication_origin_session_setup",
        "pg_replication_origin_session_reset",
        "pg_replication_origin_xact_setup",
        "pg_replication_origin_xact_reset",
        "pg_backup_start",
        "pg_backup_stop",
        "pg_start_backup",
        "pg_stop_backup",
        "brin_summarize_range",
        "brin_summarize_new_values",
        "brin_desummarize_range",
        "gin_clean_pending_list",
        "pg_import_system_collations",
        "pg_extension_config_dump",
        "pg_export_snapshot",
        "pg_nextoid",
        "pg_stop_making_pinned_objects",
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "ts_stat",
        "ts_rewrite",
    };

    private static final String[] WRITER_PREFIXES = {
        "pg_advisory_", "pg_try_advisory_", "pg_stat_reset", "binary_upgrade_", "pg_create_", "pg_drop_", "pg_copy_",
    };

    /**
     * VOLATILE built-ins that neither write nor need a writable server: random values, clocks,
     * sleeps, and probes of sizes, files, locks and recovery state that a hot standby answers.
     */
    private static final String[] HARMLESS_VOLATILE = {
        "random",
        "random_normal",
        "setseed",
        "clock_timestamp",
        "timeofday",
        "gen_random_uuid",
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "current_query",
        "pg_is_in_recovery",
        "pg_last_wal_receive_lsn",
        "pg_last_wal_replay_lsn",
        "pg_last_xact_replay_timestamp",
        "pg_is_wal_replay_paused",
        "pg_get_wal_replay_pause_state",
        "pg_blocking_pids",
        "pg_safe_snapshot_blocking_pids",
        "pg_isolation_test_session_is_blocked",
        "pg_lock_status",
        "pg_database_size",
        "pg_relation_size",
        "pg_table_size",
        "pg_indexes_size",
        "pg_total_relation_size",
        "pg_tablespace_size",
        "pg_stat_clear_snapshot",
        "pg_stat_have_stats",
        "pg_stat_force_next_flush",
        "pg_stat_file",
        "pg_ls_dir",
        "pg_ls_logdir",
        "pg_ls_waldir",
        "pg_ls_tmpdir",
        "pg_ls_archive_statusdir",
        "pg_ls_logicalmapdir",
        "pg_ls_logicalsnapdir",
        "pg_ls_replslotdir",
        "pg_read_file",
        "pg_read_file_old",
        "pg_read_binary_file",
        "pg_current_logfile",
        "pg_control_checkpoint",
        "pg_control_init",
        "pg_control_recovery",
        "pg_control_system",
        "pg_jit_available",
        "pg_notification_queue_usage",
        "pg_partition_ancestors",
        "pg_partition_tree",
        "pg_collation_actual_version",
        "pg_database_collation_actual_version",
        "pg_get_backend_memory_contexts",
        "pg_get_shmem_allocations",
        "pg_get_multixact_members",
        "pg_hba_file_rules",
        "pg_ident_file_mappings",
        "pg_show_all_file_settings",
        "pg_prepared_xact",
        "pg_sequence_last_value",
        "pg_xact_commit_timestamp",
        "pg_xact_commit_timestamp_origin",
        "pg_last_committed_xact",
        "txid_status",
        "pg_xact_status",
        "pg_get_wal_resource_managers",
        "pg_stat_get_recovery_prefetch",
        "pg_show_replication_origin_status",
        "pg_replication_origin_session_is_setup",
        "pg_replication_origin_progress",
        "pg_replication_origin_session_progress",
        "bernoulli",
        "system",
        "amvalidate",
        "lo_get",
    };

    /** Harmless-volatile families: per-transaction statistics counters. */
    private static final String[] HARMLESS_VOLATILE_PREFIXES = {"pg_stat_get_"};

    static final NameTable VOLATILITY = load("builtin-functions.tsv", BuiltinFunctions::volatilityCode);
    static final NameTable KEYWORDS = load("keywords.tsv", BuiltinFunctions::keywordCode);
    private static final NameTable WRITER_TABLE = flags(WRITERS);
    private static final NameTable HARMLESS_TABLE = flags(HARMLESS_VOLATILE);

    private BuiltinFunctions() {}

    static boolean isWriter(CharSequence s, int start, int end) {
        return WRITER_TABLE.get(s, start, end) != NameTable.ABSENT || hasPrefix(s, start, end, WRITER_PREFIXES);
    }

    static boolean isHarmlessVolatile(CharSequence s, int start, int end) {
        return HARMLESS_TABLE.get(s, start, end) != NameTable.ABSENT
                || hasPrefix(s, start, end, HARMLESS_VOLATILE_PREFIXES);
    }

    private static boolean hasPrefix(CharSequence s, int start, int end, String[] prefixes) {
        for (String p : prefixes) {
            if (end - start >= p.length()) {
                boolean match = true;
                for (int k = 0; k < p.length() && match; k++) {
                    match = NameTable.lower(s.charAt(start + k)) == p.charAt(k);
                }
                if (match) {
                    return true;
                }
            }
        }
        return false;
    }

    private static NameTable flags(String[] names) {
        int[] ones = new int[names.length];
        java.util.Arrays.fill(ones, 1);
        return new NameTable(names, ones);
    }

    private static int volatilityCode(String s) {
        switch (s) {
            case "i":
                return IMMUTABLE;
            case "s":
                return STABLE;
            case "v":
                return VOLATILE;
            default:
                throw new IllegalStateException("bad volatility " + s);
        }
    }

    private static int keywordCode(String s) {
        switch (s) {
            case "U":
                return KW_UNRESERVED;
            case "C":
                return KW_COLUMN_NAME;
            case "T":
                return KW_TYPE_FUNC_NAME;
            case "R":
                return KW_RESERVED;
            default:
                throw new IllegalStateException("bad keyword category " + s);
        }
    }

    private interface Code {
        int of(String column);
    }

    private static NameTable load(String resource, Code code) {
        List<String> names = new ArrayList<>();
        List<Integer> values = new ArrayList<>();
        try (InputStream in = BuiltinFunctions.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(
                        "missing classpath resource " + resource + " next to " + BuiltinFunctions.class.getName());
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line; (line = r.readLine()) != null; ) {
                if (line.isEmpty() || line.charAt(0) == '#') {
                    continue;
                }
                int tab = line.indexOf('\t');
                names.add(line.substring(0, tab));
                values.add(code.of(line.substring(tab + 1).trim()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
        int[] vals = new int[values.size()];
        for (int i = 0; i < vals.length; i++) {
            vals[i] = values.get(i);
        }
        return new NameTable(names.toArray(new String[0]), vals);
    }
}
