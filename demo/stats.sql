-- The last part of the demo: what the server counted while it served the rounds above
-- (syncular.stats / syncular.stats_tables, docs/operations.md).  scripts/demo.sh starts its
-- cluster with shared_preload_libraries = 'syncular'; a cluster without it has no counters, and
-- the views say so (one row, preloaded = false), which is printed instead.
\echo '════ syncular.stats: what the server counted during the demo (docs/operations.md) ════'
SELECT coalesce(bool_and(preloaded), true) AS preloaded FROM syncular.stats \gset
\if :preloaded
\x on
SELECT datname, rounds, rounds_ok, rounds_refused, rounds_refused_by_code,
       push_commits_applied, push_commits_cached, push_commits_rejected, push_rejected_by_code,
       push_conflicts, push_operations,
       pull_sections_incremental, pull_sections_bootstrap, pull_sections_reset, pull_sections_revoked,
       pull_commits_served, pull_changes_served, pull_rows_served, response_bytes,
       (SELECT sum(x) FROM unnest(push_time_buckets) x) AS push_phases_timed,
       round((push_time_sum_ms / nullif((SELECT sum(x) FROM unnest(push_time_buckets) x), 0))::numeric, 2) AS push_ms_mean,
       (SELECT sum(x) FROM unnest(pull_time_buckets) x) AS pull_phases_timed,
       round((pull_time_sum_ms / nullif((SELECT sum(x) FROM unnest(pull_time_buckets) x), 0))::numeric, 2) AS pull_ms_mean
  FROM syncular.stats WHERE datname LIKE 'demo\_%' ORDER BY datname;
\x off
\echo '── per table (syncular.stats_tables) ──'
SELECT datname, table_name, push_operations AS ops, push_conflicts AS conflicts, push_rejected AS rejected,
       pull_sections_incremental AS incr, pull_sections_bootstrap AS boot, pull_sections_reset AS reset,
       pull_sections_revoked AS revoked, pull_commits_served AS commits, pull_changes_served AS changes,
       pull_rows_served AS rows
  FROM syncular.stats_tables WHERE datname LIKE 'demo\_%' ORDER BY datname, table_name;
SELECT CASE WHEN sum(rounds_ok) > 0 AND sum(push_commits_applied) > 0 AND sum(rounds_refused) > 0
            THEN 'ok: syncular.stats counted the demo''s rounds (served and refused) and commits'
            ELSE 'FAILED: syncular.stats counted nothing' END AS check
  FROM syncular.stats WHERE datname LIKE 'demo\_%' \gset
\echo :check
SELECT :'check' LIKE 'ok:%' AS counted \gset
\if :counted
\else
SELECT syncular._raise('sync.internal_error', 'the demo''s counters did not move');
\endif
\else
\echo 'The library is not in shared_preload_libraries on this cluster: no counters, and the view says so:'
SELECT preloaded, datname, rounds FROM syncular.stats;
\endif
