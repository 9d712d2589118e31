CREATE FUNCTION syncular._stats_tables(
  OUT dbid oid, OUT table_name text,
  OUT push_operations bigint, OUT push_conflicts bigint, OUT push_rejected bigint,
  OUT pull_sections_incremental bigint, OUT pull_sections_bootstrap bigint,
  OUT pull_sections_reset bigint, OUT pull_sections_revoked bigint,
  OUT pull_commits_served bigint, OUT pull_changes_served bigint, OUT pull_rows_served bigint)
RETURNS SETOF record LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_stats_tables';
