-- capture_direct: the log of a multi-row INSERT (or COPY), or of an UPDATE of several rows that
-- keeps their keys and scopes, made without the log statement (storage_capture_direct.c) writes
-- what the statement writes: one change per row in row id byte order, the commit's scope index
-- entries once each (a later statement of the same transaction adds only its new values), the
-- inserted rows' row-scope entries, skipping an entry that is already there (a write outside the
-- capture left it); with a tombstone of the table in the partition an insert's statement makes
-- the log (it clears the re-inserted rows' tombstones).
\set testdb syncular_t_capture_direct
\i sql/capture_helpers.psql
CREATE FUNCTION pg_temp.log(p_part text) RETURNS TABLE (seq bigint, idx int, row_id text, op smallint, ver bigint, scopes jsonb)
LANGUAGE sql AS $$
  SELECT c.commit_seq, c.idx, c.row_id, c.op, c.row_version, c.scopes FROM syncular.changes c
   WHERE c.partition = p_part ORDER BY 1, 2
$$;
CREATE FUNCTION pg_temp.scope_index(p_part text) RETURNS TABLE (seq bigint, var text, value text)
LANGUAGE sql AS $$
  SELECT s.commit_seq, s.var, s.value FROM syncular.sync_change_scopes s WHERE s.partition = p_part
  UNION ALL
  SELECT c.commit_seq, c.scope_var, c.scope_value FROM syncular.sync_commits c
   WHERE c.partition = p_part AND c.scope_var IS NOT NULL ORDER BY 1, 2, 3
$$;
CREATE FUNCTION pg_temp.row_scopes(p_part text) RETURNS TABLE (var text, value text, row_id text)
LANGUAGE sql AS $$
  SELECT r.var, r.value, r.row_id FROM syncular.sync_row_scopes r WHERE r.partition = p_part ORDER BY 1, 2, 3
$$;

-- one statement, three lists, ids out of byte order: changes numbered in byte order
SET syncular.partition = 'd1';
INSERT INTO app.todos (id, list_id, title) VALUES ('r10', 'l2', 'a'), ('r9', 'l1', 'b'), ('R1', 'l3', 'c'), ('r1', 'l1', 'd');
SELECT * FROM pg_temp.log('d1');
SELECT * FROM pg_temp.scope_index('d1');
SELECT * FROM pg_temp.row_scopes('d1');

-- two statements of one transaction: one commit; the second adds only its new scope value
BEGIN;
INSERT INTO app.todos (id, list_id) VALUES ('s1', 'l1'), ('s2', 'l4');
INSERT INTO app.todos (id, list_id) VALUES ('s3', 'l4'), ('s4', 'l5');
COMMIT;
SELECT * FROM pg_temp.log('d1') WHERE seq > 1;
SELECT * FROM pg_temp.scope_index('d1') WHERE seq > 1;

-- a row deleted with the capture off (session_replication_role: triggers do not fire) leaves its
-- row-scope entry behind; inserting the row again keeps one entry, and the log has the insert
SET session_replication_role = replica;
DELETE FROM app.todos WHERE _sync_partition = 'd1' AND id = 'r9';
SET session_replication_role = DEFAULT;
SELECT count(*) AS stale_entries FROM syncular.sync_row_scopes WHERE partition = 'd1' AND row_id = 'r9';
INSERT INTO app.todos (id, list_id, title) VALUES ('r9', 'l1', 'again'), ('r8', 'l1', 'new');
SELECT * FROM pg_temp.log('d1') WHERE seq > 2;
SELECT * FROM pg_temp.row_scopes('d1') WHERE value = 'l1';

-- a tombstone of the table in the partition: the statement makes the log, clearing it
DELETE FROM app.todos WHERE _sync_partition = 'd1' AND id = 's1';
SELECT row_id FROM syncular.sync_tombstones WHERE partition = 'd1';
INSERT INTO app.todos (id, list_id) VALUES ('s1', 'l1'), ('s5', 'l1');
SELECT row_id FROM syncular.sync_tombstones WHERE partition = 'd1';
SELECT * FROM pg_temp.log('d1') WHERE seq > 4;

-- an UPDATE of several rows that keeps their keys and scopes: their changes and the commit's
-- scope entries (an earlier statement of the same commit wrote one of them), no row-scope work
BEGIN;
INSERT INTO app.todos (id, list_id) VALUES ('u1', 'l7'), ('u2', 'l7');
UPDATE app.todos SET title = 'edited' WHERE _sync_partition = 'd1' AND list_id IN ('l7', 'l2');
COMMIT;
SELECT * FROM pg_temp.log('d1') WHERE seq > 5;
SELECT * FROM pg_temp.scope_index('d1') WHERE seq > 5;
SELECT count(*) AS row_scope_entries FROM syncular.sync_row_scopes WHERE partition = 'd1';
SELECT id, title, _sync_server_version FROM app.todos WHERE _sync_partition = 'd1' AND list_id IN ('l7', 'l2') ORDER BY 1;

-- an UPDATE of one row in its own transaction: its commit row, with the change in it, written
-- without a statement, after the writer fence and the serve gate, which refuse it as they
-- refuse a push (nothing written); a checkpoint the session declared lets it pass
INSERT INTO syncular.sync_writer_fence (partition, required_writer_version) VALUES ('d1', 2);
UPDATE app.todos SET title = 'fenced' WHERE _sync_partition = 'd1' AND id = 'r1';
DELETE FROM syncular.sync_writer_fence WHERE partition = 'd1';
SELECT syncular.declare_checkpoint('d1', 'bf1', 1) ->> 'state' AS checkpoint;
UPDATE app.todos SET title = 'gated' WHERE _sync_partition = 'd1' AND id = 'r1';
SET syncular.checkpoints = '[{"partition": "d1", "name": "bf1", "schemaVersion": 1}]';
UPDATE app.todos SET title = 'declared' WHERE _sync_partition = 'd1' AND id = 'r1';
RESET syncular.checkpoints;
DELETE FROM syncular.sync_backfill_checkpoints WHERE partition = 'd1';
UPDATE app.todos SET title = 'plain' WHERE _sync_partition = 'd1' AND id = 'r1';
SELECT title, _sync_server_version FROM app.todos WHERE _sync_partition = 'd1' AND id = 'r1';
SELECT * FROM pg_temp.log('d1') WHERE row_id = 'r1';
SELECT commit_seq, tbl, row_id, scope_var, scope_value, result IS NULL AS no_result
  FROM syncular.sync_commits WHERE partition = 'd1' AND row_id = 'r1' ORDER BY 1;
SELECT c ->> 'commitSeq' AS seq, c -> 'changes' -> 0 -> 'row' ->> 'title' AS title
  FROM jsonb_array_elements(syncular.pull('d1', 'u', 'c8', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": 6}]') -> 0 -> 'commits') c;

-- a one-row INSERT in its own transaction: the commit row with the change in it and the row's
-- row-scope entry, without a statement (an entry left behind by a delete with the capture off
-- stays one entry); a row inserted again over its tombstone: the tombstone cleared
SET session_replication_role = replica;
DELETE FROM app.todos WHERE _sync_partition = 'd1' AND id = 'r8';
SET session_replication_role = DEFAULT;
INSERT INTO app.todos (id, list_id, title) VALUES ('r8', 'l1', 'one row');
INSERT INTO app.todos (id, list_id, title) VALUES ('n1', 'l8', 'one row');
DELETE FROM app.todos WHERE _sync_partition = 'd1' AND id = 'n1';
INSERT INTO app.todos (id, list_id, title) VALUES ('n1', 'l8', 'back');
SELECT commit_seq, row_id, op, row_version, scope_var, scope_value FROM syncular.sync_commits
 WHERE partition = 'd1' AND row_id IN ('r8', 'n1') ORDER BY 1;
SELECT * FROM pg_temp.log('d1') WHERE row_id = 'n1';
SELECT * FROM pg_temp.row_scopes('d1') WHERE row_id IN ('r8', 'n1');
SELECT count(*) AS n1_tombstones FROM syncular.sync_tombstones WHERE partition = 'd1' AND row_id = 'n1';

-- COPY of rows into two partitions: one commit each, pulled as a client gets them
COPY app.todos (_sync_partition, id, list_id, title) FROM STDIN;
d2	c2	l1	copied
d3	c3	l1	copied
d2	c1	l1	copied
\.
SELECT * FROM pg_temp.log('d2');
SELECT * FROM pg_temp.log('d3');
SELECT c -> 'changes' -> 0 ->> 'rowId' AS first, c -> 'changes' -> 1 ->> 'rowId' AS second
  FROM jsonb_array_elements(syncular.pull('d2', 'u', 'c9', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": 0}]') -> 0 -> 'commits') c;
RESET syncular.partition;
\i sql/capture_done.psql
