-- syncular install script, part 45: activity statistics (src/stats.c) and lag views.
--
-- The counters live in shared memory: they are collected only when the library is in
-- shared_preload_libraries.  Conventions of pg_stat_statements: superuser or pg_read_all_stats
-- reads them, the owner resets them.  docs/operations.md says what every figure means.

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
COMMENT ON FUNCTION syncular._stats() IS
'Internal: the rows of the view syncular.stats (one per database with counters; without shared_preload_libraries '
'one row for the current database with preloaded = false, every figure NULL, and a NOTICE). '
'Errors: sync.forbidden (SQLSTATE 42501) unless the caller is superuser or a member of pg_read_all_stats. '
'Host operations, no SPEC section; docs/operations.md.';

CREATE FUNCTION syncular._stats_tables(
  OUT dbid oid, OUT table_name text,
  OUT push_operations bigint, OUT push_conflicts bigint, OUT push_rejected bigint,
  OUT pull_sections_incremental bigint, OUT pull_sections_bootstrap bigint,
  OUT pull_sections_reset bigint, OUT pull_sections_revoked bigint,
  OUT pull_commits_served bigint, OUT pull_changes_served bigint, OUT pull_rows_served bigint)
RETURNS SETOF record LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_stats_tables';
COMMENT ON FUNCTION syncular._stats_tables() IS
'Internal: the rows of the view syncular.stats_tables (one per database and synced table with counters; none and a '
'NOTICE without shared_preload_libraries). '
'Errors: sync.forbidden (SQLSTATE 42501) unless the caller is superuser or a member of pg_read_all_stats. '
'Host operations, no SPEC section; docs/operations.md.';

CREATE FUNCTION syncular.stats_reset() RETURNS void
LANGUAGE C VOLATILE AS 'MODULE_PATHNAME', 'syncular_stats_reset';
COMMENT ON FUNCTION syncular.stats_reset() IS
'Sets every counter of syncular.stats and syncular.stats_tables back to zero, for every database of the cluster, '
'and records the time in stats_reset. No arguments; returns nothing. Owner-only (EXECUTE is not granted to PUBLIC). '
'Without shared_preload_libraries it does nothing and says so with a NOTICE. Never raises. '
'Host operations, no SPEC section; docs/operations.md.';

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
COMMENT ON VIEW syncular.stats IS
  'Activity counters per database since stats_reset (shared memory; needs shared_preload_libraries = ''syncular'', '
  'otherwise one row with preloaded = false and NULL figures): rounds by outcome (refused ones by catalogue code), '
  'push commits applied / cached / rejected (by code), conflicts, operations, pull sections by kind, commits, changes '
  'and rows served, response bytes, push and pull phase time histograms (bucket upper bounds in time_buckets_ms, ms). '
  'Superuser or pg_read_all_stats. docs/operations.md.';

CREATE VIEW syncular.stats_tables AS
SELECT s.dbid, d.datname, s.table_name,
       s.push_operations, s.push_conflicts, s.push_rejected,
       s.pull_sections_incremental, s.pull_sections_bootstrap, s.pull_sections_reset, s.pull_sections_revoked,
       s.pull_commits_served, s.pull_changes_served, s.pull_rows_served
  FROM syncular._stats_tables() s
  LEFT JOIN pg_catalog.pg_database d ON d.oid = s.dbid;
COMMENT ON VIEW syncular.stats_tables IS
  'Activity counters per database and synced table since the last syncular.stats_reset() (shared memory; empty '
  'without shared_preload_libraries): operations of applied commits, conflicts and rejections caused by an operation '
  'on the table, pull sections by kind, commits, changes and rows served. Superuser or pg_read_all_stats. '
  'docs/operations.md.';

-- Lag, from the catalog (no preload needed).
CREATE VIEW syncular.partition_lag AS
SELECT p.partition,
       p.max_commit_seq AS newest_commit_seq,
       (SELECT c.created_at_ms FROM syncular.sync_commits c
         WHERE c.partition = p.partition AND c.commit_seq = p.max_commit_seq) AS newest_commit_at_ms,
       coalesce(a.clients, 0) AS clients,
       coalesce(a.no_cursor, 0) AS clients_without_cursor,
       a.oldest_cursor AS oldest_client_cursor,
       p.max_commit_seq - a.oldest_cursor AS max_commits_behind,
       a.last_seen_at_ms
  FROM syncular.partitions p
  LEFT JOIN LATERAL (
    SELECT count(*) AS clients, count(*) FILTER (WHERE c.cursor < 0) AS no_cursor,
           min(c.cursor) FILTER (WHERE c.cursor >= 0) AS oldest_cursor,
           max(c.updated_at_ms) AS last_seen_at_ms
      FROM syncular.sync_clients c WHERE c.partition = p.partition) a ON true;
COMMENT ON VIEW syncular.partition_lag IS
  'Read-only. One row per known partition: newest_commit_seq (max_commit_seq) and its created_at_ms, clients, '
  'clients_without_cursor (cursor < 0: no pull served yet, or only revoked subscriptions), oldest_client_cursor (the lowest cursor >= 0 of its client records, NULL when '
  'none), max_commits_behind = newest_commit_seq - oldest_client_cursor (commit sequence numbers of the whole '
  'partition, an upper bound of what that client has still to pull), last_seen_at_ms (newest client record update, '
  'ms since the epoch). SPEC §4.5, §4.6. docs/operations.md.';

CREATE VIEW syncular.client_lag AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor,
       coalesce(p.max_commit_seq, 0) AS newest_commit_seq,
       CASE WHEN c.cursor >= 0 THEN greatest(coalesce(p.max_commit_seq, 0) - c.cursor, 0) END AS commits_behind,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon,
       c.updated_at_ms AS last_seen_at_ms,
       syncular.now_ms() - c.updated_at_ms AS idle_ms
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition;
COMMENT ON VIEW syncular.client_lag IS
  'Read-only. One row per client record: wire_version and cursor of its last round, commits_behind = the '
  'partition''s newest commit_seq - cursor (NULL while the client has no cursor, cursor < 0; counts every commit of the '
  'partition, an upper bound), behind_horizon (its next pull resets with sync.cursor_expired), last_seen_at_ms (ms '
  'since the epoch) and idle_ms (syncular.now_ms() - last_seen_at_ms). SPEC §4.5. docs/operations.md.';

REVOKE ALL ON syncular.stats, syncular.stats_tables, syncular.partition_lag, syncular.client_lag FROM PUBLIC;
GRANT SELECT ON syncular.stats, syncular.stats_tables TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION syncular._stats(), syncular._stats_tables() TO pg_read_all_stats;
