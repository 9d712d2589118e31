-- producer_push: syncular.push answers one entry per commit, in order, with one result per
-- operation; a conflict's serverRow decoded and its conflictColumns named; a rejection's details
-- (PUSH_RESULT_DETAILS) on its commit; a repeated clientCommitId replayed.  Its work is linear in
-- the operations (arrays grown in place, tables and commits looked up by key): a commit of 3,000
-- operations answers 3,000 results in order.
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
CREATE DATABASE syncular_t_producer_push;
\c syncular_t_producer_push
SET client_min_messages = warning;
CREATE EXTENSION syncular;
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true}]},
  {"name": "notes", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "integer", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "body", "type": "string", "nullable": true}]}]}'::jsonb, '[]'::jsonb, 'public') ->> 'action' AS action;
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["l1"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');

-- a commit of 3,000 operations over two tables: 3,000 results, in operation order
SET syncular.max_operations_per_request = 5000;
SELECT c ->> 'status' AS status, jsonb_array_length(c -> 'results') AS results,
       (SELECT bool_and((r ->> 'opIndex')::int = n - 1 AND r ->> 'status' = 'applied')
          FROM jsonb_array_elements(c -> 'results') WITH ORDINALITY AS x(r, n)) AS in_order
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', jsonb_build_array(jsonb_build_object(
         'clientCommitId', 'bulk', 'operations', (SELECT jsonb_agg(CASE WHEN i % 2 = 0
           THEN jsonb_build_object('table', 'todos', 'row', jsonb_build_object('id', 't' || i, 'list_id', 'l1', 'title', 'x'))
           ELSE jsonb_build_object('table', 'notes', 'row', jsonb_build_object('id', i, 'list_id', 'l1', 'body', 'y')) END
           ORDER BY i) FROM generate_series(1, 3000) i))))) c;
RESET syncular.max_operations_per_request;
SELECT count(*) AS todos FROM public.todos;
SELECT count(*) AS notes FROM public.notes;

-- several commits: applied, a conflict (serverRow decoded, conflictColumns named), a rejection
-- (a scope the actor may not write), a rejection with details (PUSH_RESULT_DETAILS: a key past
-- the index maximum), the first commit again (replayed)
SELECT jsonb_pretty(syncular.push('p1', 'u1', 'c1', '[
  {"clientCommitId": "one", "operations": [{"table": "todos", "row": {"id": "a", "list_id": "l1", "title": "first"}}]},
  {"clientCommitId": "two", "operations": [{"table": "todos", "baseVersion": 0, "row": {"id": "t2", "list_id": "l1", "title": "stale"}}]},
  {"clientCommitId": "three", "operations": [{"table": "todos", "row": {"id": "z", "list_id": "l9", "title": "denied"}}]}]'::jsonb
  || jsonb_build_array(jsonb_build_object('clientCommitId', 'four', 'operations', jsonb_build_array(
       jsonb_build_object('table', 'todos', 'row', jsonb_build_object('id', 'ok', 'list_id', 'l1', 'title', NULL)),
       jsonb_build_object('table', 'todos', 'row', jsonb_build_object('id', repeat('k', 3000), 'list_id', 'l1', 'title', NULL)))))
  || '[{"clientCommitId": "one", "operations": [{"table": "todos", "row": {"id": "a", "list_id": "l1", "title": "first"}}]}]')
  #- '{0,commitSeq}');

-- bad input: clear errors, nothing applied
SELECT syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "x", "operations": [{"table": "nope", "row": {"id": "q"}}]}]');
SELECT syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "x", "operations": [{"table": "todos", "row": {"title": "no key"}}]}]');
SELECT syncular.push('p1', 'u1', 'c1', '[{"clientCommitId": "x"}]');
SELECT syncular.push('p1', 'u1', 'c1', '[]');
SELECT count(*) AS commits FROM syncular.sync_commits WHERE client_commit_id = 'x';
\c :orig_db
DROP DATABASE syncular_t_producer_push;
