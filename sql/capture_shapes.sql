-- capture_shapes: every log statement a captured statement can take (the one-row statement of
-- a one-row INSERT or in-place UPDATE, the lean statements of a multi-row INSERT and of an
-- UPDATE whose rows keep their scopes, few rows and many, the general statement) writes the
-- same commit log, scope index (wherever an entry is kept), row scope index and tombstones as a
-- push of the same rows: partition 'sql' is written with SQL, partition 'psh' with syncular.push,
-- one commit per step on each side, and the two are compared (commit_seq counted from each
-- partition's first commit).
\set testdb syncular_t_capture_shapes
\i sql/capture_helpers.psql
CREATE FUNCTION pg_temp.push_rows(p_ccid text, p_ops jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT syncular.push('psh', 'u1', 'c1', jsonb_build_array(jsonb_build_object(
    'clientCommitId', p_ccid, 'operations', p_ops))) -> 0 ->> 'status'
$$;
CREATE FUNCTION pg_temp.row_op(p_id text, p_list text, p_title text, p_n int, p_base int)
RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('table', 'todos', 'op', 'upsert', 'row', jsonb_build_object('id', p_id,
    'list_id', p_list, 'title', p_title, 'done', NULL, 'n', p_n, 'meta', NULL))
    || CASE WHEN p_base IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('baseVersion', p_base) END
$$;
-- what differs between the two partitions (none: the same log, index entries, tombstones, rows)
CREATE FUNCTION pg_temp.differences() RETURNS TABLE (what text, side text, item text)
LANGUAGE sql AS $$
  WITH base AS (SELECT c.partition, min(c.commit_seq) - 1 AS b FROM syncular.sync_commits c
                 WHERE c.partition IN ('sql', 'psh') GROUP BY c.partition),
  ch AS (SELECT c.partition, concat_ws(' ', c.commit_seq - base.b, c.idx, c.tbl, c.row_id, c.op,
                  c.row_version, c.scopes, encode(c.payload, 'hex')) AS item
           FROM syncular.changes c JOIN base USING (partition)),
  -- the scope index: its rows, and the entries one-upsert commits keep in their commit row
  cs AS (SELECT s.partition, concat_ws(' ', s.tbl, s.var, s.value, s.commit_seq - base.b) AS item
           FROM syncular.sync_change_scopes s JOIN base USING (partition)
         UNION ALL
         SELECT c.partition, concat_ws(' ', c.tbl, c.scope_var, c.scope_value, c.commit_seq - base.b)
           FROM syncular.sync_commits c JOIN base USING (partition) WHERE c.scope_var IS NOT NULL),
  rs AS (SELECT r.partition, concat_ws(' ', r.tbl, r.var, r.value, r.row_id) AS item
           FROM syncular.sync_row_scopes r WHERE r.partition IN ('sql', 'psh')),
  tb AS (SELECT t.partition, concat_ws(' ', t.tbl, t.row_id, t.commit_seq - base.b) AS item
           FROM syncular.sync_tombstones t JOIN base USING (partition)),
  tr AS (SELECT t._sync_partition AS partition, concat_ws(' ', t._sync_row_id, t._sync_server_version,
                  t._sync_scopes, encode(t._sync_payload, 'hex'), encode(t._sync_column_versions, 'hex')) AS item
           FROM app.todos t WHERE t._sync_partition IN ('sql', 'psh')),
  allx AS (SELECT 'change' AS what, * FROM ch UNION ALL SELECT 'change scope', * FROM cs
           UNION ALL SELECT 'row scope', * FROM rs UNION ALL SELECT 'tombstone', * FROM tb
           UNION ALL SELECT 'row', * FROM tr)
  (SELECT what, 'only sql', item FROM allx WHERE partition = 'sql'
   EXCEPT ALL SELECT what, 'only sql', item FROM allx WHERE partition = 'psh')
  UNION ALL
  (SELECT what, 'only push', item FROM allx WHERE partition = 'psh'
   EXCEPT ALL SELECT what, 'only push', item FROM allx WHERE partition = 'sql')
  ORDER BY 1, 2, 3
$$;
CREATE FUNCTION pg_temp.counts() RETURNS TABLE (part text, commits bigint, changes bigint,
  row_scopes bigint, tombstones bigint) LANGUAGE sql AS $$
  SELECT p, (SELECT count(*) FROM syncular.sync_commits WHERE partition = p),
         (SELECT count(*) FROM syncular.changes WHERE partition = p),
         (SELECT count(*) FROM syncular.sync_row_scopes WHERE partition = p),
         (SELECT count(*) FROM syncular.sync_tombstones WHERE partition = p)
    FROM unnest(ARRAY['sql', 'psh']) p ORDER BY p
$$;
INSERT INTO public.replica_cursor VALUES ('C', 'sql', '["l0", "l1", "l2"]', NULL);
SET syncular.partition = 'sql';

-- 1. a one-row INSERT (the one-row statement, a new commit)
INSERT INTO app.todos (id, list_id, title, n) VALUES ('a', 'l1', 'A', 1);
SELECT pg_temp.push_rows('k1', jsonb_build_array(pg_temp.row_op('a', 'l1', 'A', 1, NULL)));
-- 2. a three-row INSERT (the lean INSERT statement, planned for a few rows)
INSERT INTO app.todos (id, list_id, title, n) VALUES ('d', 'l2', 'D', 4), ('b', 'l1', 'B', 2),
  ('c', 'l1', 'C', 3);
SELECT pg_temp.push_rows('k2', jsonb_build_array(pg_temp.row_op('b', 'l1', 'B', 2, NULL),
  pg_temp.row_op('c', 'l1', 'C', 3, NULL), pg_temp.row_op('d', 'l2', 'D', 4, NULL)));
-- 3. a 100-row INSERT (the lean INSERT statement, planned for many rows)
INSERT INTO app.todos (id, list_id, title, n)
  SELECT 'e' || (99 - i), 'l' || (i % 3), 'E' || i, i FROM generate_series(0, 99) i;
SELECT pg_temp.push_rows('k3', (SELECT jsonb_agg(pg_temp.row_op('e' || (99 - i), 'l' || (i % 3), 'E' || i, i, NULL)
  ORDER BY ('e' || (99 - i)) COLLATE "C") FROM generate_series(0, 99) i));
-- 4. a one-row UPDATE that keeps the row's scopes (the one-row statement)
UPDATE app.todos SET title = 'A2' WHERE _sync_partition = 'sql' AND id = 'a';
SELECT pg_temp.push_rows('k4', '[{"table": "todos", "op": "upsert", "row": {"id": "a", "title": "A2"},
  "baseVersion": 1}]');
-- 5. a 100-row UPDATE that keeps every row's scopes (the lean in-place statement)
UPDATE app.todos SET n = n + 1 WHERE _sync_partition = 'sql' AND id LIKE 'e%';
SELECT pg_temp.push_rows('k5', (SELECT jsonb_agg(jsonb_build_object('table', 'todos', 'op', 'upsert',
  'row', jsonb_build_object('id', t.id, 'n', t.n), 'baseVersion', 1) ORDER BY t.id COLLATE "C")
  FROM app.todos t WHERE t._sync_partition = 'sql' AND t.id LIKE 'e%'));
-- 6. two statements of one transaction (one commit): a two-row in-place UPDATE (lean, few rows)
-- and a one-row UPDATE that appends to the commit (the one-row statement, no commit row)
BEGIN;
UPDATE app.todos SET title = title || '!' WHERE _sync_partition = 'sql' AND id IN ('b', 'c');
UPDATE app.todos SET n = 40 WHERE _sync_partition = 'sql' AND id = 'd';
COMMIT;
SELECT pg_temp.push_rows('k6', '[{"table": "todos", "op": "upsert", "row": {"id": "b", "title": "B!"}, "baseVersion": 1},
  {"table": "todos", "op": "upsert", "row": {"id": "c", "title": "C!"}, "baseVersion": 1},
  {"table": "todos", "op": "upsert", "row": {"id": "d", "n": 40}, "baseVersion": 1}]');
-- 7. deletes (the general statement)
DELETE FROM app.todos WHERE _sync_partition = 'sql' AND id IN ('b', 'c');
SELECT pg_temp.push_rows('k7', '[{"table": "todos", "op": "delete", "rowId": "b"},
  {"table": "todos", "op": "delete", "rowId": "c"}]');
SELECT * FROM pg_temp.counts();
SELECT * FROM pg_temp.differences();

-- SQL only (a push re-inserts no deleted row and moves no row to another scope): the rows again,
-- one by a one-row INSERT, two by a two-row INSERT (their tombstones cleared by the one-row and
-- the lean statement), then a one-row UPDATE that moves a row (the general statement)
SELECT max(commit_seq) AS before FROM syncular.sync_commits WHERE partition = 'sql' \gset
INSERT INTO app.todos (id, list_id, title, n) VALUES ('b', 'l2', 'B3', 5);
INSERT INTO app.todos (id, list_id, title, n) VALUES ('c', 'l1', 'C3', 6), ('f', 'l1', 'F', 7);
UPDATE app.todos SET list_id = 'l2' WHERE _sync_partition = 'sql' AND id = 'a';
SELECT part, seq - :before AS seq, idx, tbl, row_id, op, ver, scopes, payload
  FROM pg_temp.log_after(0) WHERE part = 'sql' AND seq > :before;
-- the scope index entries: sync_change_scopes rows, and the one a new commit of one upsert keeps
-- in its commit row (kept = t)
SELECT tbl, var, value, seq - :before AS seq, kept FROM (
  SELECT s.tbl, s.var, s.value, s.commit_seq AS seq, false AS kept FROM syncular.sync_change_scopes s
   WHERE s.partition = 'sql'
  UNION ALL
  SELECT c.tbl, c.scope_var, c.scope_value, c.commit_seq, true FROM syncular.sync_commits c
   WHERE c.partition = 'sql' AND c.scope_var IS NOT NULL) e
 WHERE seq > :before ORDER BY 4, 1, 2, 3;
SELECT count(*) AS tombstones FROM syncular.sync_tombstones WHERE partition = 'sql';
SELECT tbl, var, value, row_id FROM syncular.sync_row_scopes
 WHERE partition = 'sql' AND row_id IN ('a', 'b', 'c', 'f') ORDER BY row_id;

-- a pending checkpoint the session declared: the one-row statement's fast gate check fails,
-- the full gate passes, and the commit is written as usual
SELECT syncular.declare_checkpoint('sql', 'bf1', 1) ->> 'state' AS checkpoint;
INSERT INTO app.todos (id, list_id, title) VALUES ('g', 'l1', 'G');
SET syncular.checkpoints = '[{"partition": "sql", "name": "bf1", "schemaVersion": 1}]';
INSERT INTO app.todos (id, list_id, title) VALUES ('g', 'l1', 'G');
BEGIN;
UPDATE app.todos SET title = 'G2' WHERE _sync_partition = 'sql' AND id = 'g';
UPDATE app.todos SET title = 'G3' WHERE _sync_partition = 'sql' AND id = 'g';
COMMIT;
RESET syncular.checkpoints;
DELETE FROM syncular.sync_backfill_checkpoints WHERE partition = 'sql';
SELECT part, seq - (SELECT max(commit_seq) FROM syncular.sync_commits WHERE partition = 'sql') AS seq,
       idx, row_id, op, ver, payload ->> 'title' AS title
  FROM pg_temp.log_after(0) WHERE part = 'sql' AND row_id = 'g';
SELECT tbl, var, value, row_id FROM syncular.sync_row_scopes WHERE partition = 'sql' AND row_id = 'g';

-- a statement planned for many rows after the same statement of one row (kept plans per size)
UPDATE app.todos SET list_id = 'l0' WHERE _sync_partition = 'sql' AND id = 'f';
UPDATE app.todos SET list_id = 'l' || (n % 2) WHERE _sync_partition = 'sql' AND id LIKE 'e%';
SELECT count(*) AS moved_rows, count(DISTINCT s.commit_seq) AS commits
  FROM syncular.changes s
 WHERE s.partition = 'sql' AND s.commit_seq = (SELECT max(commit_seq) FROM syncular.sync_commits
                                                WHERE partition = 'sql');
SELECT pg_temp.sync('C') AS c;

-- a transaction whose first statement wrote one row (its commit row keeps that change, idx 0)
-- and whose later statements add changes to the same commit (sync_changes rows, idx 1 on): a
-- pull serves them in order, in one commit, as the view lists them
SELECT max(commit_seq) AS before FROM syncular.sync_commits WHERE partition = 'sql' \gset
BEGIN;
INSERT INTO app.todos (id, list_id, title, n) VALUES ('k1', 'l1', 'K1', 1);
INSERT INTO app.todos (id, list_id, title, n) VALUES ('k2', 'l1', 'K2', 2), ('k3', 'l2', 'K3', 3);
UPDATE app.todos SET title = 'K1b' WHERE _sync_partition = 'sql' AND id = 'k1';
COMMIT;
SELECT c.commit_seq - :before AS seq, c.tbl AS kept_change, c.scope_var, c.scope_value,
       (SELECT count(*) FROM syncular.sync_changes x WHERE x.partition = c.partition
         AND x.commit_seq = c.commit_seq) AS change_rows
  FROM syncular.sync_commits c WHERE c.partition = 'sql' AND c.commit_seq > :before;
SELECT seq - :before AS seq, idx, row_id, op, ver, payload ->> 'title' AS title
  FROM pg_temp.log_after(:before) WHERE part = 'sql';
SELECT x ->> 'commitSeq' = (:before + 1)::text AS one_commit,
       (SELECT string_agg(ch ->> 'rowId' || ':' || (ch -> 'row' ->> 'title'), ' ')
          FROM jsonb_array_elements(x -> 'changes') ch) AS changes
  FROM jsonb_array_elements(syncular.pull('sql', 'u', 'k-reader', jsonb_build_array(jsonb_build_object(
         'id', 's', 'table', 'todos', 'scopes', '{"list_id": ["l1", "l2"]}'::jsonb,
         'cursor', :before))) -> 0 -> 'commits') x;
SELECT pg_temp.sync('C') AS c;

-- a bulk statement after the same kind of statement of one row in this session (above): the
-- general statement's plan is kept per size class; a plan kept from a one-row statement nested
-- loops over the transition tables, and this 20,000-row scope move ran for minutes
INSERT INTO app.todos (id, list_id) SELECT 'h' || i, 'l1' FROM generate_series(1, 20000) i;
SET statement_timeout = '60s';
UPDATE app.todos SET list_id = 'l2' WHERE _sync_partition = 'sql' AND id LIKE 'h%';
RESET statement_timeout;
SELECT op, count(*) FROM syncular.changes
 WHERE partition = 'sql' AND commit_seq = (SELECT max(commit_seq) FROM syncular.sync_commits
                                            WHERE partition = 'sql')
 GROUP BY op ORDER BY op;
SELECT value, count(*) FROM syncular.sync_row_scopes
 WHERE partition = 'sql' AND row_id LIKE 'h%' GROUP BY value;
\i sql/capture_done.psql
