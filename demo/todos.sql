-- Demo part 1: the generated IR of a real app (quickstart todos), two clients, real rounds.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION syncular;
\i :demodir/client.sql

SELECT syncular.ensure_schema(:'ir'::jsonb) AS "ensure_schema(quickstart todos IR)";
\d todos

-- Who may see and write what: alice and bob share the groceries list; only alice sees chores.
CREATE FUNCTION public.allowed_scopes(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT CASE actor WHEN 'alice' THEN '{"list_id": ["groceries", "chores"]}'::jsonb
                    WHEN 'bob'   THEN '{"list_id": ["groceries"]}'::jsonb
                    ELSE '{}'::jsonb END
$$;
SELECT 'scope resolver registered' AS hooks FROM (SELECT syncular.set_scope_resolver('public.allowed_scopes(text,text,text)')) r;

INSERT INTO demo.clients VALUES ('phone-A', 'alice', NULL), ('laptop-B', 'bob', NULL);
INSERT INTO demo.subscriptions (client_id, id, tbl, scopes) VALUES
  ('phone-A', 'todos-groceries', 'todos', '{"list_id": ["groceries"]}'),
  ('laptop-B', 'todos-groceries', 'todos', '{"list_id": ["groceries"]}');

-- 1. A's first round acquires the partition's log epoch.
SELECT demo.sync('phone-A', p_title => 'A: first contact, acquires the log epoch') IS NOT NULL AS ok \gset
-- 2. A was offline and queued three commits; one round pushes the outbox FIFO and pulls.
SELECT demo.sync('phone-A', '[
  {"id": "A-1", "operations": [
     {"table": "todos", "rowId": "t1", "op": "upsert", "row": {"id": "t1", "list_id": "groceries", "title": "milk", "done": false, "position": 1, "updated_at_ms": 1000}},
     {"table": "todos", "rowId": "t2", "op": "upsert", "row": {"id": "t2", "list_id": "groceries", "title": "bread", "done": false, "position": 2, "updated_at_ms": 1000}}]},
  {"id": "A-2", "operations": [
     {"table": "todos", "rowId": "t3", "op": "upsert", "row": {"id": "t3", "list_id": "groceries", "title": "eggs", "done": false, "position": 3, "updated_at_ms": 1001}}]},
  {"id": "A-3", "operations": [
     {"table": "todos", "rowId": "t2", "op": "upsert", "baseVersion": 1, "row": {"id": "t2", "done": true, "updated_at_ms": 1002}}]}
]', 'A: replays its offline outbox (3 commits) and pulls') IS NOT NULL AS ok \gset
-- 3. B appears: epoch, then a bootstrap in pages of 2 rows with a resume token.
SELECT demo.sync('laptop-B', p_title => 'B: first contact, acquires the log epoch') IS NOT NULL AS ok \gset
SELECT demo.sync('laptop-B', p_title => 'B: bootstraps (page 1)') IS NOT NULL AS ok \gset
SELECT demo.sync('laptop-B', p_title => 'B: resumes the bootstrap from its token (page 2)') IS NOT NULL AS ok \gset
SELECT demo.sync('laptop-B', p_title => 'B: caught up, incremental from the pin') IS NOT NULL AS ok \gset
-- 4. Both edit t1 from version 1: A renames it, B renames it too. A wins; B gets a conflict.
SELECT demo.sync('phone-A', '[{"id": "A-4", "operations": [
     {"table": "todos", "rowId": "t1", "op": "upsert", "baseVersion": 1, "row": {"id": "t1", "title": "oat milk", "updated_at_ms": 2000}}]}]',
  'A: renames t1 (base 1)') IS NOT NULL AS ok \gset
SELECT demo.sync('laptop-B', '[{"id": "B-1", "operations": [
     {"table": "todos", "rowId": "t1", "op": "upsert", "baseVersion": 1, "row": {"id": "t1", "title": "whole milk", "position": 9, "updated_at_ms": 2001}}]}]',
  'B: renames t1 too (base 1): conflict') -> 'frames' AS b1_frames \gset
-- 5. B resolves: keeps the server title, keeps its own position, pushes on the new base.
SELECT demo.sync('laptop-B', '[{"id": "B-2", "operations": [
     {"table": "todos", "rowId": "t1", "op": "upsert", "baseVersion": 2, "row": {"id": "t1", "position": 9, "updated_at_ms": 2002}}]}]',
  'B: rebases on version 2 and pushes only the column it owns') IS NOT NULL AS ok \gset
-- 6. A deletes t3; both pull and converge.
SELECT demo.sync('phone-A', '[{"id": "A-5", "operations": [{"table": "todos", "rowId": "t3", "op": "delete"}]}]',
  'A: deletes t3') IS NOT NULL AS ok \gset
SELECT demo.sync('laptop-B', p_title => 'B: pulls') IS NOT NULL AS ok \gset
SELECT demo.sync('phone-A', p_title => 'A: pulls') IS NOT NULL AS ok \gset
-- 7. A retries an old commit whose response it lost: replayed as cached, applied once.
SELECT demo.sync('phone-A', '[{"id": "A-4", "operations": [
     {"table": "todos", "rowId": "t1", "op": "upsert", "baseVersion": 1, "row": {"id": "t1", "title": "oat milk", "updated_at_ms": 2000}}]}]',
  'A: retransmits A-4 after a lost ack') IS NOT NULL AS ok \gset
-- 8. Bob may not write outside his grant, and a subscription to a list he cannot see is revoked.
SELECT demo.sync('laptop-B', '[{"id": "B-3", "operations": [
     {"table": "todos", "rowId": "t9", "op": "upsert", "row": {"id": "t9", "list_id": "chores", "title": "vacuum", "done": false, "position": 1, "updated_at_ms": 3000}}]}]',
  'B: writes into the chores list: forbidden') IS NOT NULL AS ok \gset
INSERT INTO demo.subscriptions (client_id, id, tbl, scopes) VALUES ('laptop-B', 'todos-chores', 'todos', '{"list_id": ["chores"]}');
SELECT demo.sync('laptop-B', p_title => 'B: subscribes to chores: revoked') IS NOT NULL AS ok \gset

\pset format unaligned
\pset tuples_only on
SELECT line FROM demo.transcript ORDER BY n;
\pset format aligned
\pset tuples_only off

\echo
\echo ── convergence ────────────────────────────────────────────────────────────
SELECT c.client_id, r.row_id, r.version, r.row_data->>'title' AS title, r.row_data->>'done' AS done,
       r.row_data->>'position' AS position
  FROM demo.clients c JOIN demo.replica r USING (client_id) ORDER BY r.row_id, c.client_id;
SELECT _sync_row_id AS row_id, _sync_server_version AS version, title, done, position FROM todos ORDER BY 1;
SELECT demo.check(count(DISTINCT (r.row_id, r.version, r.row_data)) = (SELECT count(*) FROM todos)
                  AND count(*) = 2 * (SELECT count(*) FROM todos)
                  AND (SELECT count(*) FROM demo.replica) = 2 * (SELECT count(*) FROM todos)
                  AND (SELECT count(*) FROM todos) > 0,
                  'both replicas equal the server: converged') AS result
  FROM demo.replica r JOIN todos t ON t._sync_row_id = r.row_id AND t._sync_server_version = r.version
   AND syncular.decode_row('todos', t._sync_payload) = r.row_data;
SELECT demo.check(r ->> 'status' = 'conflict' AND r ->> 'code' = 'sync.version_conflict'
                  AND syncular.decode_row('todos', decode(r ->> 'serverRow', 'base64')) ->> 'title' = 'oat milk',
                  'B-1 got sync.version_conflict with the serverRow it rebased on (title "oat milk")') AS conflict
  FROM jsonb_array_elements(:'b1_frames'::jsonb) f, jsonb_array_elements(f -> 'results') r
 WHERE f ->> 'type' = 'PUSH_RESULT';
SELECT commit_seq, client_id, client_commit_id, actor_id FROM syncular.sync_commits ORDER BY commit_seq;
