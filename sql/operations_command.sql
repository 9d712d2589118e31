-- Remote operations: registered commands through syncular.operations_http (REMOTE.md §3, §5, §7):
-- the push pipeline under the tuple identity, cached retries that do not run the command again,
-- stored rejections, raising commands, invalid mutation plans, getRow, the reserved prefix.
\set testdb syncular_t_ops_command
\i sql/operations_helpers.psql

CREATE TABLE public.runs (request text, n int DEFAULT 1);
CREATE FUNCTION public.may_add(actor text, part text, params jsonb) RETURNS boolean
LANGUAGE sql AS $$ SELECT actor <> 'denied' $$;
-- addTodo: bumps n of an existing todo (read with operation_get_row) or creates it; counts its runs
CREATE FUNCTION public.add_todo(actor text, part text, params jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  cur jsonb := syncular.operation_get_row('todos', params ->> 'id');
BEGIN
  INSERT INTO public.runs VALUES (params ->> 'id');
  IF params ->> 'mode' = 'raise' THEN RAISE EXCEPTION 'command exploded'; END IF;
  IF params ->> 'mode' = 'empty' THEN RETURN '[]'; END IF;
  IF params ->> 'mode' = 'null' THEN RETURN NULL; END IF;
  IF params ->> 'mode' = 'bad' THEN RETURN params -> 'plan'; END IF;
  IF params ->> 'mode' = 'delete' THEN
    RETURN jsonb_build_array(jsonb_build_object('op', 'delete', 'table', 'todos', 'rowId', params ->> 'id'));
  END IF;
  RETURN jsonb_build_array(jsonb_build_object('op', 'upsert', 'table', 'todos', 'row', jsonb_build_object(
    'id', params ->> 'id', 'list_id', params ->> 'list', 'title', coalesce(params ->> 'title', cur ->> 'title'),
    'done', false, 'n', coalesce((cur ->> 'n')::bigint, 0) + 1, 'score', NULL, 'meta', cur, 'raw', NULL)));
END $$;
SELECT syncular.register_command('addTodo', 'public.may_add(text,text,jsonb)', 'public.add_todo(text,text,jsonb)') ->> 'action' AS registered;

CREATE FUNCTION pg_temp.cmd(actor text, request text, params jsonb, client text DEFAULT 'w1', part text DEFAULT 'p1',
                            id text DEFAULT 'addTodo') RETURNS text
LANGUAGE sql AS $$
  SELECT pg_temp.op(part, actor, jsonb_build_object('revision', 1, 'kind', 'command', 'clientId', client,
                                                   'operationId', id, 'requestId', request, 'params', params))
$$;

-- applied: a new row through the push pipeline, under the REMOTE.md §3 identity
SELECT pg_temp.cmd('u1', 'r1', '{"id": "t9", "list": "l1", "title": "nine"}') AS applied;
SELECT client_id, client_commit_id, actor_id, commit_seq FROM syncular.sync_commits WHERE partition = 'p1' ORDER BY commit_seq;
SELECT _sync_row_id, title, n, _sync_server_version FROM public.todos WHERE _sync_partition = 'p1' AND id = 't9';
-- the retry: cached, same commitSeq, the command did not run again
SELECT pg_temp.cmd('u1', 'r1', '{"id": "t9", "list": "l1", "title": "nine"}') AS retry;
SELECT count(*) AS runs FROM public.runs WHERE request = 't9';
-- a new request id runs again and reads the row it wrote (getRow): n = 2, the previous row in meta
SELECT pg_temp.cmd('u1', 'r2', '{"id": "t9", "list": "l1"}') AS second_request;
SELECT title, n, meta ->> 'title' AS previous_title FROM public.todos WHERE _sync_partition = 'p1' AND id = 't9';
-- the same clientId and requestId from another actor is another identity (u2 may not write l1:
-- a rejection, stored, replayed without running the command)
SELECT pg_temp.cmd('u2', 'r1', '{"id": "t9", "list": "l1", "title": "hijack"}') AS other_actor_rejected;
SELECT pg_temp.cmd('u2', 'r1', '{"id": "t9", "list": "l1", "title": "hijack"}') AS rejection_replays;
SELECT count(*) AS runs FROM public.runs WHERE request = 't9';
SELECT client_id, client_commit_id, result ->> 'status' AS status FROM syncular.push_results
 WHERE client_id LIKE '["remote-command"%' ORDER BY 1, 2;
-- a delete
SELECT pg_temp.cmd('u1', 'r3', '{"id": "t2", "mode": "delete"}') AS deleted;
SELECT count(*) AS t2_rows FROM public.todos WHERE _sync_partition = 'p1' AND id = 't2';

-- request failures, nothing stored: a raising command, an empty / NULL / malformed plan
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "raise"}') AS command_raises;
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "empty"}') AS empty_plan;
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "null"}') AS null_plan;
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "bad", "plan": {"op": "upsert"}}') AS not_an_array;
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "bad", "plan": [{"op": "merge", "table": "todos"}]}') AS bad_op;
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "bad", "plan": [{"op": "upsert", "table": "nope", "row": {}}]}') AS unknown_table;
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "bad", "plan": [{"op": "upsert", "table": "todos", "row": {"id": "t5"}}]}') AS partial_row;
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "bad", "plan": [{"op": "upsert", "table": "todos", "row":
  {"id": "t5", "list_id": "l1", "title": "x", "done": "yes", "n": 1, "score": null, "meta": null, "raw": null}}]}') AS bad_value;
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "mode": "bad", "plan": [{"op": "delete", "table": "todos"}]}') AS delete_without_row_id;
SELECT count(*) AS stored_r4 FROM syncular.push_results WHERE client_commit_id = '["addTodo","r4"]';
-- after the failures the same request id still applies
SELECT pg_temp.cmd('u1', 'r4', '{"id": "t5", "list": "l2", "title": "five"}') AS applied_after_failures;

-- authorization, identity and envelope
SELECT pg_temp.cmd('denied', 'r5', '{"id": "t6", "list": "l1"}') AS authorize_false;
SELECT pg_temp.cmd('boom', 'r5', '{"id": "t6", "list": "l1"}') AS resolver_fails;
SELECT pg_temp.cmd('u1', 'r5', '{"id": "t6", "list": "l1"}', id => 'nope') AS unknown_command;
SELECT syncular.register_query('listTodos', 'SELECT id FROM todos WHERE list_id = $1', '[{"name": "id", "type": "string"}]',
  ARRAY['todos'], params => '[{"name": "l", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]') ->> 'action' AS registered;
SELECT pg_temp.cmd('u1', 'r5', '{"l": "l1"}', id => 'listTodos') AS query_id_as_command;
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "command", "clientId": "w1", "operationId": "addTodo", "params": {}}') AS missing_request_id;
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "command", "clientId": "w1", "operationId": "addTodo", "requestId": "", "params": {}}') AS empty_request_id;
SELECT pg_temp.cmd('u1', 'r5', '{"id": "t6", "list": "l1"}', client => '["remote-command","u1","w1"]') AS reserved_prefix;
-- operation_get_row outside a command
SELECT pg_temp.try($$SELECT syncular.operation_get_row('todos', 't1')$$) ->> 'code' AS get_row_outside;
-- an ordinary SSP2 client cannot occupy a command result key
SELECT pg_temp.try($$SELECT syncular.push('p1', 'u1', '["remote-command","u1","w1"]', '[{"clientCommitId": "[\"addTodo\",\"r9\"]",
  "operations": [{"table": "todos", "op": "delete", "rowId": "t1"}]}]')$$) ->> 'code' AS ssp2_reserved_prefix;

\i sql/operations_done.psql
