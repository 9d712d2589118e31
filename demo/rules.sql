-- Demo part: server-side write rules (README "Write rules", docs/hooks.md).  The todos IR plus a
-- unique index (one title per list) and a row validator (titles of at most 40 characters).
-- A too-long title is rejected with the host's code; a title that collides with an existing
-- todo ends as a durable rejection: retried, it gets the same answer, and nothing of the commit
-- was written.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION syncular;
\i :demodir/client.sql

-- the IR of the app, with one more declared index on todos: (list_id, title) unique
SELECT jsonb_set(:'ir'::jsonb, '{tables}',
         (SELECT jsonb_agg(CASE WHEN t ->> 'name' = 'todos'
                                THEN t || jsonb_build_object('indexes', coalesce(t -> 'indexes', '[]'::jsonb) ||
                                       '[{"name": "one_title_per_list", "columns": ["list_id", "title"], "unique": true}]'::jsonb)
                                ELSE t END ORDER BY n)
            FROM jsonb_array_elements(:'ir'::jsonb -> 'tables') WITH ORDINALITY AS x(t, n))) AS rules_ir \gset
SELECT syncular.ensure_schema(:'rules_ir'::jsonb) ->> 'action' AS "ensure_schema(todos IR + unique index)";
SELECT indexname AS "declared index", indexdef FROM pg_indexes WHERE tablename = 'todos' AND indexname LIKE 'sync_ix_%';

CREATE FUNCTION public.allowed_scopes(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN actor IN ('alice', 'bob') THEN '{"list_id": ["groceries"]}'::jsonb ELSE '{}'::jsonb END
$$;
SELECT 'scope resolver registered' AS hooks FROM (SELECT syncular.set_scope_resolver('public.allowed_scopes(text,text,text)')) r;

-- the row validator: a todo title has at most 40 characters (host code app.title_too_long)
CREATE FUNCTION public.validate_todo(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb,
                                     actor_id text, partition text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF op = 'upsert' AND char_length(new_row ->> 'title') > 40 THEN
    RAISE EXCEPTION 'todo title too long' USING ERRCODE = 'SY001',
      DETAIL = json_build_object(
        'code', 'app.title_too_long',
        'message', 'a todo title has at most 40 characters',
        'details', json_build_object('fieldPaths', json_build_array('title'),
                                     'reason', 'title_too_long'))::text;
  END IF;
END
$$;
SELECT 'row validator registered on todos' AS hooks
  FROM (SELECT syncular.set_row_validator('todos', 'public.validate_todo(text, text, text, jsonb, jsonb, text, text)')) r;

INSERT INTO demo.clients VALUES ('phone-A', 'alice', NULL), ('laptop-B', 'bob', NULL);
INSERT INTO demo.subscriptions (client_id, id, tbl, scopes) VALUES
  ('phone-A', 'todos-groceries', 'todos', '{"list_id": ["groceries"]}'),
  ('laptop-B', 'todos-groceries', 'todos', '{"list_id": ["groceries"]}');

SELECT demo.sync('phone-A', p_title => 'A: first contact') IS NOT NULL AS ok \gset
SELECT demo.sync('laptop-B', p_title => 'B: first contact') IS NOT NULL AS ok \gset
-- 1. A valid todo applies.
SELECT demo.sync('phone-A', '[{"id": "A-1", "operations": [
     {"table": "todos", "rowId": "t1", "op": "upsert", "row": {"id": "t1", "list_id": "groceries", "title": "milk", "done": false, "position": 1, "updated_at_ms": 1000}}]}]',
  'A: adds "milk"') IS NOT NULL AS ok \gset
-- 2. A too-long title: the row validator rejects it with the host code and details.
SELECT demo.sync('phone-A', '[{"id": "A-2", "operations": [
     {"table": "todos", "rowId": "t2", "op": "upsert", "row": {"id": "t2", "list_id": "groceries", "title": "a very long title that nobody will ever read on a phone", "done": false, "position": 2, "updated_at_ms": 1001}}]}]',
  'A: a 55-character title: app.title_too_long') IS NOT NULL AS ok \gset
-- 3. B adds "bread" and "milk" in one commit: "milk" collides with A's todo (unique index),
--    so the whole commit is rejected at opIndex 1, "bread" included.
SELECT demo.sync('laptop-B', '[{"id": "B-1", "operations": [
     {"table": "todos", "rowId": "t3", "op": "upsert", "row": {"id": "t3", "list_id": "groceries", "title": "bread", "done": false, "position": 3, "updated_at_ms": 1002}},
     {"table": "todos", "rowId": "t4", "op": "upsert", "row": {"id": "t4", "list_id": "groceries", "title": "milk", "done": false, "position": 4, "updated_at_ms": 1002}}]}]',
  'B: adds "bread" + "milk": unique collision') -> 'frames' AS first_answer \gset
-- 4. B lost the answer and retries B-1: the stored rejection is replayed, nothing is re-run.
SELECT demo.sync('laptop-B', '[{"id": "B-1", "operations": [
     {"table": "todos", "rowId": "t3", "op": "upsert", "row": {"id": "t3", "list_id": "groceries", "title": "bread", "done": false, "position": 3, "updated_at_ms": 1002}},
     {"table": "todos", "rowId": "t4", "op": "upsert", "row": {"id": "t4", "list_id": "groceries", "title": "milk", "done": false, "position": 4, "updated_at_ms": 1002}}]}]',
  'B: retries B-1: the same durable rejection') -> 'frames' AS second_answer \gset

\pset format unaligned
\pset tuples_only on
SELECT line FROM demo.transcript ORDER BY n;
\pset format aligned
\pset tuples_only off

\echo
\echo ── write rules: what the server kept ─────────────────────────────────────
SELECT demo.check(
         (SELECT f FROM jsonb_array_elements(:'first_answer'::jsonb) f WHERE f ->> 'type' = 'PUSH_RESULT')
       = (SELECT f FROM jsonb_array_elements(:'second_answer'::jsonb) f WHERE f ->> 'type' = 'PUSH_RESULT')
         AND (SELECT f ->> 'status' FROM jsonb_array_elements(:'second_answer'::jsonb) f
               WHERE f ->> 'type' = 'PUSH_RESULT') = 'rejected',
         'the retry of B-1 got the same rejected PUSH_RESULT') AS "retry got the same result";
SELECT client_id, client_commit_id, result ->> 'status' AS status,
       r ->> 'opIndex' AS op, r ->> 'code' AS code, r ->> 'message' AS message, r -> 'details' AS details
  FROM syncular.push_results, jsonb_array_elements(result -> 'results') r
 ORDER BY client_commit_id, (r ->> 'opIndex')::int;
SELECT _sync_row_id AS row_id, _sync_server_version AS version, title FROM todos ORDER BY 1;
SELECT commit_seq, client_id, client_commit_id FROM syncular.sync_commits ORDER BY commit_seq;
