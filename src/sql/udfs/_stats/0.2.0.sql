CREATE FUNCTION syncular._stats(
  OUT preloaded boolean, OUT dbid oid,
  OUT rounds_ok bigint, OUT rounds_refused bigint,
  OUT push_commits_applied bigint, OUT push_commits_cached bigint, OUT push_commits_rejected bigint,
  OUT push_conflicts bigint, OUT push_operations bigint,
  OUT pull_sections_incremental bigint, OUT pull_sections_bootstrap bigint,
  OUT pull_sections_reset bigint, OUT pull_sections_revoked bigint,
  OUT pull_commits_served bigint, OUT pull_changes_served bigint, OUT pull_rows_served bigint,
  OUT response_bytes bigint,
  OUT rounds_refused_by_code jsonb, OUT push_rejected_by_code jsonb,
  OUT time_buckets_ms double precision[],
  OUT push_time_buckets bigint[], OUT push_time_sum_ms double precision,
  OUT pull_time_buckets bigint[], OUT pull_time_sum_ms double precision,
  OUT stats_reset timestamptz)
RETURNS SETOF record LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_stats';
