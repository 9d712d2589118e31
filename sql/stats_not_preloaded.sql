-- stats_not_preloaded: this cluster does not preload the library, so there is no shared memory for
-- the activity counters: syncular.stats answers one row for this database with preloaded = false
-- and NULL figures, stats_tables no row, stats_reset does nothing, each with a NOTICE saying
-- why (the counters themselves are tested by the TAP test test/t/010_counters.pl on a preloaded node).  The lag
-- views read the catalog and work everywhere.
\set testdb syncular_t_stats_np
\i sql/push_helpers.psql

RESET client_min_messages;
SHOW shared_preload_libraries;
SELECT preloaded, datname = current_database() AS this_db, rounds, rounds_ok, push_commits_applied,
       rounds_refused_by_code, push_time_buckets, stats_reset
  FROM syncular.stats;
SELECT count(*) AS table_rows FROM syncular.stats_tables;
SELECT syncular.stats_reset();

-- lag: two clients of p1 (A at cursor 1 after its push and bootstrap, B bootstrapped later at 2),
-- a client whose only subscription is revoked (cursor -1: nothing pulled yet), and a second partition without clients
SELECT count(*) AS frames FROM pg_temp.acquire('p1', 'u1', 'A');
SELECT count(*) AS frames FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('a-1', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": false, "n": 1, "meta": null, "doc": null, "att": null}')),
  pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')));
SELECT count(*) AS frames FROM pg_temp.round('p1', 'u2', 'B', jsonb_build_array(
  pg_temp.pc('b-1', pg_temp.up('todos', '{"id": "t1", "done": true}', 1)),
  pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')));
SELECT count(*) AS frames FROM pg_temp.round('p1', 'u3', 'C', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')));
SELECT count(*) AS frames FROM pg_temp.acquire('p2', 'u1', 'A');
SELECT partition, newest_commit_seq, newest_commit_at_ms > 0 AS has_time, clients, clients_without_cursor,
       oldest_client_cursor, max_commits_behind, last_seen_at_ms > 0 AS seen
  FROM syncular.partition_lag ORDER BY partition;
SELECT partition, client_id, actor_id, wire_version, cursor, newest_commit_seq, commits_behind, behind_horizon,
       last_seen_at_ms > 0 AS seen, idle_ms >= 0 AS idle_known
  FROM syncular.client_lag ORDER BY partition, client_id;

\i sql/push_done.psql
