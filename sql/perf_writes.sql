-- perf_writes: what a round does not write.  A pushed commit creates no MultiXact (the
-- partition lock is not a lock the commit's subtransaction then updates over) and updates the
-- partition row once (its lock and its commit_seq together); a commit that is not applied gives
-- its commit_seq back (gap-free); an update of a stored row writes no row-scope entries; the registry
-- touch and a push-only round's unchanged client record are rewritten only when at least a
-- second old (SYNC_TOUCH_INTERVAL_MS).  Timestamps are set far in the past or future, so no
-- outcome depends on how fast the rounds run.
\set testdb syncular_t_perf_writes
\i sql/push_helpers.psql

SELECT * FROM pg_temp.acquire('p1', 'u1', 'A');
CREATE FUNCTION pg_temp.push(id text, row_id text) RETURNS boolean LANGUAGE sql AS $$
  SELECT syncular.debug_render(syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
           pg_temp.pc(id, pg_temp.up('todos', jsonb_build_object('id', row_id, 'list_id', 'l1',
             'title', row_id, 'done', false, 'n', 1, 'meta', null, 'doc', null, 'att', null))))),
           'p1', 'u1')) -> 'frames' -> 1 ->> 'status' = 'applied'
$$;
SELECT pg_temp.push('c-1', 'r1') AS applied;

-- no MultiXact for three pushed commits, each in its own transaction
CHECKPOINT;
SELECT next_multixact_id AS mx0 FROM pg_control_checkpoint() \gset
SELECT pg_temp.push('c-2', 'r2') AS applied;
SELECT pg_temp.push('c-3', 'r3') AS applied;
SELECT pg_temp.push('c-4', 'r4') AS applied;
CHECKPOINT;
SELECT next_multixact_id = :'mx0' AS no_multixact FROM pg_control_checkpoint();
SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1';

-- registry touch: a recent last_authenticated_at_ms is not rewritten ...
UPDATE syncular.sync_partition_registry SET last_authenticated_at_ms = 9000000000000 WHERE partition = 'p1';
SELECT xmin::text AS reg_xmin FROM syncular.sync_partition_registry WHERE partition = 'p1' \gset
SELECT pg_temp.push('c-5', 'r5') AS applied;
SELECT xmin::text = :'reg_xmin' AS registry_not_rewritten, last_authenticated_at_ms
  FROM syncular.sync_partition_registry WHERE partition = 'p1';
-- ... an old one is
UPDATE syncular.sync_partition_registry SET last_authenticated_at_ms = 1 WHERE partition = 'p1';
SELECT pg_temp.push('c-6', 'r6') AS applied;
SELECT last_authenticated_at_ms > 1000 AS touched FROM syncular.sync_partition_registry WHERE partition = 'p1';

-- a push-only round leaves a current client record alone ...
UPDATE syncular.sync_clients SET updated_at_ms = 9000000000000 WHERE client_id = 'A';
SELECT xmin::text AS cl_xmin FROM syncular.sync_clients WHERE client_id = 'A' \gset
SELECT pg_temp.push('c-7', 'r7') AS applied;
SELECT xmin::text = :'cl_xmin' AS client_not_rewritten, cursor, wire_version
  FROM syncular.sync_clients WHERE client_id = 'A';
-- ... rewrites an old one ...
UPDATE syncular.sync_clients SET updated_at_ms = 1 WHERE client_id = 'A';
SELECT pg_temp.push('c-8', 'r8') AS applied;
SELECT updated_at_ms > 1000 AS rewritten FROM syncular.sync_clients WHERE client_id = 'A';
-- ... and a pull round always writes its record (cursor, subscriptions)
UPDATE syncular.sync_clients SET updated_at_ms = 9000000000000 WHERE client_id = 'A';
SELECT xmin::text AS cl_xmin FROM syncular.sync_clients WHERE client_id = 'A' \gset
SELECT count(*) > 0 AS pulled FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.sub('s1', 'todos', '{"list_id": ["l1"]}', 0)));
SELECT xmin::text <> :'cl_xmin' AS client_rewritten, cursor, subscriptions -> 0 ->> 'id' AS sub
  FROM syncular.sync_clients WHERE client_id = 'A';


-- a new row's row-scope entry is inserted against the primary key, whatever plan the kept
-- statement got while sync_row_scopes was empty and never analyzed: one more push reads the
-- partition's row-scope entries at most once (its clean-up probe), not once more to check
-- for an existing entry (a NOT EXISTS probe whose generic plan filtered every entry)
DO $$ BEGIN FOR i IN 1..300 LOOP PERFORM pg_temp.push('b-' || i, 'b' || i); END LOOP; END $$;
CREATE FUNCTION pg_temp.scope_reads() RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(idx_tup_read)::bigint FROM pg_stat_all_indexes
   WHERE schemaname = 'syncular' AND relname = 'sync_row_scopes' $$;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.scope_reads() AS r0 \gset
SELECT pg_temp.push('b-new', 'b-new') AS applied;
SELECT pg_stat_force_next_flush();
SELECT count(*) AS entries, pg_temp.scope_reads() - :r0 < 1.5 * count(*) AS at_most_one_pass
  FROM syncular.sync_row_scopes WHERE partition = 'p1';
-- a commit of several updates of stored rows whose scopes stay (each row its own upsert
-- statement: todos has a blob_ref column) neither reads nor writes a row-scope entry: a row's
-- entries are addressed by primary key from its stored scopes, and only a changed scope value
-- is looked up (docs/storage.md; 0.5.0 read 310 entries per row here)
CREATE FUNCTION pg_temp.row_up(row_id text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT pg_temp.up('todos', jsonb_build_object('id', row_id, 'list_id', 'l1', 'title', row_id || ' again',
           'done', false, 'n', 2, 'meta', null, 'doc', null, 'att', null), 1) $$;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.scope_reads() AS r0 \gset
BEGIN;
SELECT syncular.debug_render(syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
         pg_temp.pc('batch-1', pg_temp.row_up('b1'), pg_temp.row_up('b2'), pg_temp.row_up('b3')))),
         'p1', 'u1')) -> 'frames' -> 1 ->> 'status' AS applied;
SELECT coalesce((SELECT n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_xact_user_tables
                  WHERE relname = 'sync_row_scopes'), 0) AS row_scope_writes;
COMMIT;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.scope_reads() - :r0 AS row_scope_entries_read;
-- what one pushed commit writes, table by table (this transaction's own counters), with the
-- client record and the registry touch current: the row once (an update of a stored row: no
-- row-scope entry written or deleted), the commit once, with its stored result, its change and
-- its scope index entry: no sync_changes row, no sync_push_results row, no sync_change_scopes
-- row (docs/storage.md "Commit log layout"), and nothing for the partition lock and commit_seq
-- (no partition row update: docs/storage.md "The partition lock")
UPDATE syncular.sync_clients SET updated_at_ms = 9000000000000 WHERE client_id = 'A';
UPDATE syncular.sync_partition_registry SET last_authenticated_at_ms = 9000000000000 WHERE partition = 'p1';
SELECT pg_stat_force_next_flush();	-- the counters below then hold the next transaction's only
BEGIN;
SELECT pg_temp.push('w-1', 'r1') AS applied;
SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_xact_user_tables
 WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY relname;
COMMIT;
-- a replayed commit and a rejected one take the partition lock and write nothing for it (no
-- update of the partition row: docs/storage.md "The partition lock"), max_commit_seq unchanged;
-- the next applied commit takes the next number
SELECT max_commit_seq AS seq0 FROM syncular.partitions WHERE partition = 'p1' \gset
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT syncular.debug_render(syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
         pg_temp.pc('w-1', pg_temp.up('todos', '{"id": "r1", "title": "again"}')))), 'p1', 'u1'))
         -> 'frames' -> 1 ->> 'status' AS replayed;
SELECT n_tup_upd AS partition_row_updates FROM pg_stat_xact_user_tables WHERE relname = 'sync_partitions';
COMMIT;
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT syncular.debug_render(syncular.handle(pg_temp.req('p1', 'A', jsonb_build_array(
         pg_temp.pc('w-2', pg_temp.up('todos', '{"id": "r1", "title": "ahead"}', 999)))), 'p1', 'u1'))
         -> 'frames' -> 1 ->> 'status' AS rejected;
SELECT n_tup_upd AS partition_row_updates FROM pg_stat_xact_user_tables WHERE relname = 'sync_partitions';
COMMIT;
SELECT max_commit_seq - :seq0 AS seq_moved FROM syncular.partitions WHERE partition = 'p1';
SELECT pg_temp.push('w-3', 'r3') AS applied;
SELECT max_commit_seq - :seq0 AS seq_moved,
       (SELECT count(*) = max(commit_seq) - min(commit_seq) + 1 AND min(commit_seq) = 1
          FROM syncular.sync_commits WHERE partition = 'p1') AS gap_free
  FROM syncular.partitions WHERE partition = 'p1';
\c :orig_db
DROP DATABASE :testdb;
