-- Live query watches, the database half (REMOTE.md §6): syncular.operations_watch_rerun reruns,
-- in one call and one snapshot, exactly the watches of a partition whose answer may have changed:
-- the registration snapshot; a commit on an unrelated scope value (another list) reruns no
-- scoped watch, a matching one does; a commit on another table reruns nothing; privileged
-- watches rerun on any change of their tables; batching; partition binding; errors.
\set testdb syncular_t_ops_watch
\i sql/operations_helpers.psql

SELECT syncular.register_query('todosInList',
  'SELECT id, title FROM todos WHERE list_id = $1 ORDER BY id',
  '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"}]', ARRAY['todos'],
  params => '[{"name": "listId", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "listId"}]', max_rows => 10) ->> 'action' AS registered;
CREATE FUNCTION public.allow_all(actor text, part text, params jsonb) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
SELECT syncular.register_query('todoCount', 'SELECT count(*) AS n FROM todos',
  '[{"name": "n", "type": "integer", "nullable": false}]', ARRAY['todos'],
  mode => 'privileged', authorize => 'public.allow_all(text,text,jsonb)', max_rows => 1) ->> 'action' AS registered;

-- wm(watchId, operationId, params): an encoded watch message
CREATE FUNCTION pg_temp.wm(wid text, id text, params jsonb, client text DEFAULT 'c1') RETURNS jsonb
LANGUAGE sql AS $$
  SELECT pg_temp.enc(jsonb_build_object('revision', 1, 'kind', 'watch', 'watchId', wid, 'clientId', client,
                                        'operationId', id, 'params', params))::jsonb
$$;
-- rerun(partition, batch): each row as "w seq outcome decoded-message" (message NULL: not rerun)
CREATE FUNCTION pg_temp.rerun(part text, batch jsonb) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT w || ' ' || max_commit_seq || ' ' || outcome || ' ' ||
         coalesce(pg_temp.dec(convert_from(message, 'UTF8')::jsonb)::text, '-')
    FROM syncular.operations_watch_rerun(part, batch)
$$;
CREATE FUNCTION pg_temp.w(w int, seq bigint, actor text, msg jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('w', w, 'seq', seq, 'actorId', actor, 'message', msg)
$$;
SELECT max_commit_seq AS head FROM syncular.partitions WHERE partition = 'p1';

-- registration snapshots (seq -1): rows and maxCommitSeq, one call for the batch, in order
SELECT pg_temp.rerun('p1', jsonb_build_array(
  pg_temp.w(1, -1, 'u1', pg_temp.wm('a', 'todosInList', '{"listId": "l1"}')),
  pg_temp.w(2, -1, 'u1', pg_temp.wm('b', 'todosInList', '{"listId": "l2"}')),
  pg_temp.w(3, -1, 'u1', pg_temp.wm('c', 'todoCount', '{}'))));

-- nothing committed since: nobody reruns, each answers the head
SELECT pg_temp.rerun('p1', jsonb_build_array(
  pg_temp.w(1, 1, 'u1', pg_temp.wm('a', 'todosInList', '{"listId": "l1"}')),
  pg_temp.w(2, 1, 'u1', pg_temp.wm('b', 'todosInList', '{"listId": "l2"}')),
  pg_temp.w(3, 1, 'u1', pg_temp.wm('c', 'todoCount', '{}'))));

-- a commit on list l2: the l1 watch does not rerun (its covered value is untouched), the l2
-- watch and the privileged count do
SELECT syncular.push('p1', 'admin', 'seed', '[{"clientCommitId": "c2", "operations": [
  {"table": "todos", "op": "upsert", "row": {"id": "t4", "list_id": "l2", "title": "four", "done": false,
     "n": 4, "score": null, "meta": null, "raw": null}}]}]') -> 0 ->> 'status' AS l2_commit;
SELECT pg_temp.rerun('p1', jsonb_build_array(
  pg_temp.w(1, 1, 'u1', pg_temp.wm('a', 'todosInList', '{"listId": "l1"}')),
  pg_temp.w(2, 1, 'u1', pg_temp.wm('b', 'todosInList', '{"listId": "l2"}')),
  pg_temp.w(3, 1, 'u1', pg_temp.wm('c', 'todoCount', '{}'))));

-- a commit on another table (tags) reruns none of them
SELECT syncular.push('p1', 'admin', 'seed', '[{"clientCommitId": "c3", "operations": [
  {"table": "tags", "op": "upsert", "row": {"id": "g3", "org": "o1", "label": "green"}}]}]') -> 0 ->> 'status' AS tags_commit;
SELECT pg_temp.rerun('p1', jsonb_build_array(
  pg_temp.w(1, 2, 'u1', pg_temp.wm('a', 'todosInList', '{"listId": "l1"}')),
  pg_temp.w(2, 2, 'u1', pg_temp.wm('b', 'todosInList', '{"listId": "l2"}')),
  pg_temp.w(3, 2, 'u1', pg_temp.wm('c', 'todoCount', '{}'))));

-- a commit on l1: the l1 watch reruns; a watch that last saw seq 1 sees both windows (l2 and l1)
SELECT syncular.push('p1', 'admin', 'seed', '[{"clientCommitId": "c4", "operations": [
  {"table": "todos", "op": "upsert", "row": {"id": "t1", "list_id": "l1", "title": "one!", "done": false,
     "n": 1, "score": null, "meta": null, "raw": null}}]}]') -> 0 ->> 'status' AS l1_commit;
SELECT pg_temp.rerun('p1', jsonb_build_array(
  pg_temp.w(1, 3, 'u1', pg_temp.wm('a', 'todosInList', '{"listId": "l1"}')),
  pg_temp.w(2, 3, 'u1', pg_temp.wm('b', 'todosInList', '{"listId": "l2"}')),
  pg_temp.w(4, 1, 'u1', pg_temp.wm('d', 'todosInList', '{"listId": "l2"}'))));

-- a SQL write that moves a row out of l1 (captured as a delete with the old scopes and an upsert
-- with the new ones) reruns the watches of both lists
UPDATE public.todos SET list_id = 'l2' WHERE _sync_partition = 'p1' AND id = 't2';
SELECT pg_temp.rerun('p1', jsonb_build_array(
  pg_temp.w(1, 4, 'u1', pg_temp.wm('a', 'todosInList', '{"listId": "l1"}')),
  pg_temp.w(2, 4, 'u1', pg_temp.wm('b', 'todosInList', '{"listId": "l2"}'))));

-- partition binding: the same watch on p2 reads p2's rows and p2's head; p1's commits after
-- seq 1 do not rerun a p2 watch
SELECT pg_temp.rerun('p2', jsonb_build_array(
  pg_temp.w(1, -1, 'u1', pg_temp.wm('a', 'todosInList', '{"listId": "l1"}')),
  pg_temp.w(2, 1, 'u1', pg_temp.wm('b', 'todosInList', '{"listId": "l1"}'))));

-- per-watch failures are watch_error messages; the rest of the batch is served
SELECT pg_temp.rerun('p1', jsonb_build_array(
  pg_temp.w(1, -1, 'u2', pg_temp.wm('forbidden', 'todosInList', '{"listId": "l1"}')),
  pg_temp.w(2, -1, 'u1', pg_temp.wm('unknown', 'noSuchQuery', '{}')),
  pg_temp.w(3, -1, 'u1', pg_temp.wm('badparams', 'todosInList', '{"nope": "l1"}')),
  pg_temp.w(4, -1, 'u1', pg_temp.wm('reserved', 'todosInList', '{"listId": "l1"}', '["remote-command","x"]')),
  pg_temp.w(5, -1, 'u1', '{"t":"string","v":"not a watch"}'::jsonb),
  pg_temp.w(6, -1, 'u1', pg_temp.wm('ok', 'todosInList', '{"listId": "l1"}'))));
-- a client id bound to another actor (sync.invalid_client_id)
SELECT pg_temp.rerun('p1', jsonb_build_array(
  pg_temp.w(1, -1, 'u1', pg_temp.wm('taken', 'todosInList', '{"listId": "l1"}', 'seed'))));

-- errors of the whole call
SELECT pg_temp.try($$SELECT * FROM syncular.operations_watch_rerun('p1', '{}')$$) AS not_array;
SELECT pg_temp.try($$SELECT * FROM syncular.operations_watch_rerun('', '[]')$$) AS empty_partition;
SELECT pg_temp.try($$SELECT * FROM syncular.operations_watch_rerun(NULL, '[]')$$) AS null_partition;
SELECT pg_temp.try($$SELECT * FROM syncular.operations_watch_rerun('p1', '[{"w": 1}]')$$) AS bad_element;
SELECT count(*) AS empty_batch FROM syncular.operations_watch_rerun('p1', '[]');
-- only the owner: PUBLIC has no EXECUTE
SELECT has_function_privilege('public', 'syncular.operations_watch_rerun(text, jsonb)', 'EXECUTE') AS public_execute;

\i sql/operations_done.psql
