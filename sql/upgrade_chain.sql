-- upgrade_chain: install 0.1.0, fill it (schema, hooks, commits, clients), ALTER EXTENSION
-- syncular UPDATE along the shipped upgrade scripts, check that data, hooks and rounds survive,
-- and that the upgraded catalog is exactly a fresh install of the current version (the same
-- functions, tables, columns, indexes, privileges and comments).  Works in private databases.
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
CREATE DATABASE syncular_t_upgrade;
CREATE DATABASE syncular_t_upgrade_fresh;
\c syncular_t_upgrade
SET client_min_messages = warning;
CREATE EXTENSION syncular VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'syncular';
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": true}],
   "scopes": ["list:{list_id}"]}]}'::jsonb, '[]'::jsonb, 'public') ->> 'action' AS schema_action;
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l1"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');
CREATE FUNCTION public.validate_todo(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb,
                                     actor_id text, partition text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF op = 'upsert' AND new_row ->> 'title' = 'forbidden' THEN
    RAISE EXCEPTION 'no' USING ERRCODE = 'SY001',
      DETAIL = '{"code": "app.forbidden_title", "message": "not this title"}';
  END IF;
END $$;
SELECT syncular.set_row_validator('todos', 'public.validate_todo(text,text,text,jsonb,jsonb,text,text)');
SELECT r ->> 'status' AS status, r ->> 'commitSeq' AS commit_seq
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[
    {"clientCommitId": "a", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t1", "list_id": "l1", "title": "one"}}]},
    {"clientCommitId": "b", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t2", "list_id": "l1", "title": "two"}}]}]')) r;
-- idempotency records the 0.6.0 update converts: an applied commit's moves into its commit row;
-- a rejected commit's (no log row) and one of a commit pruned from the log (made here from a's)
-- stay in sync_push_results
SELECT r ->> 'status' AS status, r -> 'results' -> 0 ->> 'code' AS code
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[
    {"clientCommitId": "r", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t9", "list_id": "l1", "title": "forbidden"}}]}]')) r;
INSERT INTO syncular.sync_push_results (partition, client_id, client_commit_id, result)
SELECT partition, client_id, 'pruned', jsonb_set(result, '{commitSeq}', '99')
  FROM syncular.sync_push_results WHERE client_commit_id = 'a';
SELECT client_commit_id, result ->> 'status' AS status, result ->> 'commitSeq' AS result_seq
  FROM syncular.sync_push_results ORDER BY 1;

-- the update
ALTER EXTENSION syncular UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'syncular';
SELECT commit_seq, client_commit_id, result ->> 'status' AS status, result ->> 'commitSeq' AS result_seq
  FROM syncular.sync_commits ORDER BY commit_seq;
SELECT client_commit_id, result ->> 'status' AS status, result ->> 'commitSeq' AS result_seq
  FROM syncular.sync_push_results ORDER BY 1;
-- each is replayed as it was stored
SELECT r ->> 'status' AS status, r ->> 'commitSeq' AS commit_seq, r -> 'results' -> 0 ->> 'code' AS code
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[
    {"clientCommitId": "a", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t1", "list_id": "l1", "title": "one"}}]},
    {"clientCommitId": "r", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t9", "list_id": "l1", "title": "forbidden"}}]},
    {"clientCommitId": "pruned", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t9", "list_id": "l1", "title": "nine"}}]}]')) r;

-- data, hooks and rounds survive: the cached replay, the validator, a new commit, a pull
SELECT id, list_id, title FROM public.todos ORDER BY id;
SELECT scope_resolver FROM syncular.sync_settings;
SELECT r ->> 'status' AS status, r ->> 'commitSeq' AS commit_seq, r -> 'results' -> 0 ->> 'code' AS code
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[
    {"clientCommitId": "b", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t2", "list_id": "l1", "title": "two"}}]},
    {"clientCommitId": "c", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t3", "list_id": "l1", "title": "forbidden"}}]},
    {"clientCommitId": "d", "operations": [{"table": "todos", "op": "upsert",
       "row": {"id": "t3", "list_id": "l1", "title": "three"}}]}]')) r;
SELECT s ->> 'status' AS status, jsonb_array_length(s -> 'rows') AS rows
  FROM jsonb_array_elements(syncular.pull('p1', 'u1', 'c2',
         '[{"id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}}]')) s;
-- this session pushed before the update too: the commits pushed after it keep their result in
-- their commit row, nothing new went to sync_push_results
SELECT client_commit_id, result IS NOT NULL AS result_in_commit_row
  FROM syncular.sync_commits ORDER BY commit_seq;
SELECT client_commit_id FROM syncular.sync_push_results ORDER BY 1;

-- 0.4.0: the update installed the capture triggers on the registered table: a plain SQL UPDATE
-- is a sync commit a client pulls
UPDATE public.todos SET title = 'edited with SQL' WHERE id = 't1';
SELECT c.client_id, x.row_id, x.op, x.row_version, syncular.decode_row(x.tbl, x.payload) ->> 'title' AS title
  FROM syncular.sync_commits c JOIN syncular.changes x USING (partition, commit_seq)
 WHERE c.client_id = 'syncular:sql';
SELECT c ->> 'commitSeq' AS seq, c -> 'changes' -> 0 -> 'row' ->> 'title' AS title
  FROM jsonb_array_elements(syncular.pull('p1', 'u1', 'c2',
         '[{"id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": 3}]') -> 0 -> 'commits') c;

-- the upgraded catalog equals a fresh install
\set ECHO none
\i sql/upgrade_catalog.psql
\set upgraded :cat
\c syncular_t_upgrade_fresh
SET client_min_messages = warning;
CREATE EXTENSION syncular;
\i sql/upgrade_catalog.psql
\set ECHO all
-- one line per differing object: its first line (the whole text is in the .psql query)
SELECT left('only after upgrade: ' || split_part(x, E'\n', 1), 200) AS difference
  FROM (SELECT jsonb_array_elements_text(:'upgraded'::jsonb) EXCEPT SELECT jsonb_array_elements_text(:'cat'::jsonb)) d(x)
UNION ALL
SELECT left('only in a fresh install: ' || split_part(x, E'\n', 1), 200)
  FROM (SELECT jsonb_array_elements_text(:'cat'::jsonb) EXCEPT SELECT jsonb_array_elements_text(:'upgraded'::jsonb)) d(x)
ORDER BY 1;
SELECT jsonb_array_length(:'cat'::jsonb) > 300 AS described;

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE syncular_t_upgrade;
DROP DATABASE syncular_t_upgrade_fresh;
