-- maintenance: syncular.prune, syncular.rotate_log_epoch and the read-only views
-- (push-and-pull.md §5, §3.8, §1.2; data-model-and-storage.md §8).
-- pg_regress runs every test in one database: this one works in a private database so that
-- it neither sees nor leaves synced tables, registrations or catalog rows.
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_maintenance;
\c syncular_t_maintenance
\i sql/test_helpers.psql
\set VERBOSITY terse

-- p1: 20 commits, commit n created at n*1000 ms; two changes each (one for commit 20), change
-- scopes, tombstones at 3 and 15; p2: 2 commits (never touched by p1's maintenance); p3:
-- registered, never pushed (no sync_partitions row)
INSERT INTO syncular.sync_partition_registry (partition, log_epoch, last_authenticated_at_ms) VALUES
  ('p1', 'epoch-1', 99000), ('p2', 'epoch-2', 99000), ('p3', 'epoch-3', 5000);
INSERT INTO syncular.sync_partitions (partition) VALUES ('p1'), ('p2');
INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, actor_id, created_at_ms)
SELECT 'p1', n, 'c1', 'cc' || n, 'actor-1', n * 1000 FROM generate_series(1, 20) n
UNION ALL
SELECT 'p2', n, 'x1', 'xx' || n, 'actor-2', n * 1000 FROM generate_series(1, 2) n;
INSERT INTO syncular.sync_changes (partition, commit_seq, idx, tbl, row_id, op, row_version, scopes, payload)
SELECT c.partition, c.commit_seq, i, CASE WHEN i = 0 THEN 'notes' ELSE 'tags' END, 'r' || c.commit_seq, 1, 1,
       '{"list_id": "L1"}', '\x00'
  FROM syncular.sync_commits c, generate_series(0, 1) i
 WHERE NOT (c.commit_seq = 20 AND i = 1);
INSERT INTO syncular.sync_change_scopes (partition, tbl, var, value, commit_seq)
SELECT partition, 'notes', 'list_id', 'L1', commit_seq FROM syncular.sync_commits;
INSERT INTO syncular.sync_tombstones (partition, tbl, row_id, commit_seq) VALUES
  ('p1', 'notes', 'r3', 3), ('p1', 'notes', 'r15', 15), ('p2', 'notes', 'r1', 1);
-- idempotency records: one per p1 commit 10 and 16..20 (in the commit row), one for a rejected
-- commit (no log row: sync_push_results)
UPDATE syncular.sync_commits SET result = jsonb_build_object('status', 'applied', 'commitSeq', commit_seq)
 WHERE partition = 'p1' AND (commit_seq = 10 OR commit_seq >= 16);
INSERT INTO syncular.sync_push_results (partition, client_id, client_commit_id, result)
VALUES ('p1', 'c1', 'rejected-1', '{"status": "rejected"}'::jsonb);
-- clients: c1 active (cursor 8), c2 idle since 50 s (cursor 3), c3 idle (cursor -1); p2's x1
INSERT INTO syncular.sync_clients (partition, client_id, actor_id, cursor, subscriptions, updated_at_ms) VALUES
  ('p1', 'c1', 'actor-1', 8, '[]', 95000),
  ('p1', 'c2', 'actor-1', 3, '[]', 50000),
  ('p1', 'c3', 'actor-3', -1, '[]', 10000),
  ('p2', 'x1', 'actor-2', 0, '[]', 99000);

CREATE VIEW pg_temp.log AS
SELECT p.partition, p.horizon_seq,
       (SELECT count(*) FROM syncular.sync_commits c WHERE c.partition = p.partition) AS commits,
       (SELECT min(commit_seq) FROM syncular.sync_commits c WHERE c.partition = p.partition) AS first_commit,
       (SELECT count(*) FROM syncular.sync_changes c WHERE c.partition = p.partition) AS changes,
       (SELECT count(*) FROM syncular.sync_change_scopes c WHERE c.partition = p.partition) AS change_scopes,
       (SELECT string_agg(row_id, ',' ORDER BY row_id) FROM syncular.sync_tombstones c WHERE c.partition = p.partition) AS tombstones,
       (SELECT count(*) FROM syncular.push_results c WHERE c.partition = p.partition) AS push_results,
       (SELECT string_agg(client_commit_id, ',' ORDER BY client_commit_id) FROM syncular.sync_push_results c
         WHERE c.partition = p.partition) AS outside_log
  FROM syncular.sync_partitions p ORDER BY p.partition;
SELECT * FROM pg_temp.log;

-- the defaults keep the newest 1000 commits: nothing to prune (clock: the real one)
SELECT syncular.prune('p1');
-- floor = min cursor of clients active within 10 s of now = 100 s (c1: 8); nothing is old
-- enough to be forced; 20 - 5 = 15 is the cap -> horizon 8
SELECT syncular.prune('p1', '{"nowMs": 100000, "activeWindowMs": 10000, "minRetainedCommits": 5, "forceAgeMs": 1000000}');
SELECT * FROM pg_temp.log;
-- repeatable
SELECT syncular.prune('p1', '{"nowMs": 100000, "activeWindowMs": 10000, "minRetainedCommits": 5, "forceAgeMs": 1000000}');
-- an active client at cursor -1 holds the floor at -1; the horizon never goes back
UPDATE syncular.sync_clients SET updated_at_ms = 99000 WHERE client_id = 'c3';
SELECT syncular.prune('p1', '{"nowMs": 100000, "activeWindowMs": 10000, "minRetainedCommits": 5, "forceAgeMs": 1000000}');
-- but commits created before now - forceAgeMs (100000 - 88500 = 11500: commits 1..11) are forced
SELECT syncular.prune('p1', '{"nowMs": 100000, "activeWindowMs": 10000, "minRetainedCommits": 5, "forceAgeMs": 88500}');
SELECT * FROM pg_temp.log;
-- forcing everything is still capped by minRetainedCommits (20 - 5 = 15)
SELECT syncular.prune('p1', '{"nowMs": 100000, "minRetainedCommits": 5, "forceAgeMs": 0}');
SELECT * FROM pg_temp.log;
-- push results are kept unless asked: pushResultsOlderThanMs drops those whose commit (still in
-- the log) was created before now - 82000 = 18000 (commits 16, 17); the rejected one stays
SELECT syncular.prune('p1', '{"nowMs": 100000, "minRetainedCommits": 5, "pushResultsOlderThanMs": 82000}');
SELECT client_commit_id FROM syncular.push_results ORDER BY 1;
-- null values mean the default
SELECT syncular.prune('p1', '{"nowMs": 100000, "minRetainedCommits": null}');

-- a registered partition that never pushed gets its counter row
SELECT syncular.prune('p3');

-- refusals
SELECT pg_temp.try($$SELECT syncular.prune('nope')$$);
SELECT pg_temp.try($$SELECT syncular.prune('p1', '{"activeWindow": 1}')$$);
SELECT pg_temp.try($$SELECT syncular.prune('p1', '{"minRetainedCommits": -1}')$$);
SELECT pg_temp.try($$SELECT syncular.prune('p1', '{"minRetainedCommits": 1.5}')$$);
SELECT pg_temp.try($$SELECT syncular.prune('p1', '{"forceAgeMs": "30d"}')$$);
SELECT pg_temp.try($$SELECT syncular.prune('p1', '[]')$$);
SELECT pg_temp.try($$SELECT syncular.rotate_log_epoch('nope')$$);
-- an unregistered partition leaves no counter row behind
SELECT count(*) AS nope_rows FROM syncular.sync_partitions WHERE partition = 'nope';

-- views
SELECT * FROM syncular.partitions ORDER BY partition;
SELECT partition, client_id, actor_id, wire_version, cursor, updated_at_ms, behind_horizon FROM syncular.clients ORDER BY 1, 2;
SELECT partition, commit_seq, client_id, client_commit_id, actor_id, created_at_ms, writer_version, changes, tables
  FROM syncular.commits ORDER BY 1, 2;

-- epoch rotation: new random epoch, epoch_required, the partition's client records deleted
SELECT syncular.rotate_log_epoch('p1') AS new_epoch \gset
SELECT :'new_epoch' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' AS uuid_shaped,
       log_epoch = :'new_epoch' AS stored, epoch_required, last_authenticated_at_ms
  FROM syncular.sync_partition_registry WHERE partition = 'p1';
SELECT partition, client_id FROM syncular.sync_clients ORDER BY 1, 2;
SELECT syncular.rotate_log_epoch('p1') <> :'new_epoch' AS rotates_again;
SELECT partition, epoch_required FROM syncular.sync_partition_registry ORDER BY 1;
SELECT * FROM pg_temp.log;

-- privileges: maintenance is owner-only
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p WHERE p.pronamespace = 'syncular'::regnamespace
   AND p.proname IN ('prune', 'rotate_log_epoch', 'ensure_schema', 'set_scope_resolver')
 ORDER BY 1;
SELECT c.relname, has_table_privilege('public', c.oid, 'SELECT') AS public_select
  FROM pg_class c WHERE c.relnamespace = 'syncular'::regnamespace AND c.relname IN ('partitions', 'clients', 'commits', 'push_results')
 ORDER BY 1;

\c :orig_db
DROP DATABASE syncular_t_maintenance;
