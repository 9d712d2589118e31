-- rules_wire2: the write rules answer a wire-2 client in its own catalogue.  Declared
-- references (a wire-3 addition) reject with sync.reference_violation on wire 3; the wire-2
-- catalogue has no such code, so a wire-2 client gets sync.constraint_violation, the code it
-- lists for unique/FK/not-null failures (SPEC v2 §10.2), with the same PUSH_RESULT_DETAILS.
-- The stored outcome keeps the real code, and a replay answers in the request's version.
\set testdb syncular_t_rules_wire2
\i sql/rules_helpers.psql

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "projects", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false}]},
  {"name": "tasks", "primaryKey": "id", "scopes": ["ws:{ws}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "ws", "type": "string", "nullable": false},
     {"name": "project_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": true}],
   "references": [{"column": "project_id", "parentTable": "projects"}],
   "indexes": [{"name": "one_title", "columns": ["title"], "unique": true}]}]}'::jsonb) ->> 'action' AS schema_action;
INSERT INTO public.grants VALUES ('u1', 'ws', 'w1');
SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'B');

-- a task whose project does not exist: wire 2, then the same commit on wire 3
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('orphan-2',
  pg_temp.up('tasks', '{"id": "k1", "ws": "w1", "project_id": "nope", "title": "x"}', NULL, 2))), 2);
SELECT * FROM pg_temp.round('p1', 'u1', 'B', jsonb_build_array(pg_temp.pc('orphan-3',
  pg_temp.up('tasks', '{"id": "k1", "ws": "w1", "project_id": "nope", "title": "x"}'))));
-- a retry of orphan-2 replays the stored rejection, in wire 2's code again
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('orphan-2',
  pg_temp.up('tasks', '{"id": "k1", "ws": "w1", "project_id": "nope", "title": "x"}', NULL, 2))), 2);
-- what was stored: the real code for both
SELECT client_commit_id, result -> 'results' -> 0 ->> 'code' AS stored_code
  FROM syncular.push_results ORDER BY 1;
-- a unique collision is sync.constraint_violation on both versions
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('ok-2',
  pg_temp.up('projects', '{"id": "pr1", "ws": "w1"}', NULL, 2),
  pg_temp.up('tasks', '{"id": "k2", "ws": "w1", "project_id": "pr1", "title": "same"}', NULL, 2))), 2);
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('dup-2',
  pg_temp.up('tasks', '{"id": "k3", "ws": "w1", "project_id": "pr1", "title": "same"}', NULL, 2))), 2);
SELECT * FROM pg_temp.round('p1', 'u1', 'B', jsonb_build_array(pg_temp.pc('dup-3',
  pg_temp.up('tasks', '{"id": "k3", "ws": "w1", "project_id": "pr1", "title": "same"}'))));

\i sql/rules_done.psql
