CREATE VIEW syncular.stats AS
SELECT s.preloaded, s.dbid, d.datname,
       s.rounds_ok + s.rounds_refused AS rounds, s.rounds_ok, s.rounds_refused, s.rounds_refused_by_code,
       s.push_commits_applied, s.push_commits_cached, s.push_commits_rejected, s.push_rejected_by_code,
       s.push_conflicts, s.push_operations,
       s.pull_sections_incremental, s.pull_sections_bootstrap, s.pull_sections_reset, s.pull_sections_revoked,
       s.pull_commits_served, s.pull_changes_served, s.pull_rows_served, s.response_bytes,
       s.time_buckets_ms, s.push_time_buckets, s.push_time_sum_ms, s.pull_time_buckets, s.pull_time_sum_ms,
       s.stats_reset
  FROM syncular._stats() s
  LEFT JOIN pg_catalog.pg_database d ON d.oid = s.dbid;
