package io.github.hibernaterouting.audit;

/** One statement to audit: where it came from, its text, and how often it ran (1 unless from pg_stat_statements). */
record AuditStatement(String id, String sql, long calls) {}
