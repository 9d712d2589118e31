-- round_path_c: a round runs no SQL or PL/pgSQL function of the extension (DESIGN.md: the round
-- path in C).  With track_functions = 'all' PostgreSQL counts every function the executor calls
-- (a statement run through SPI included; the hooks, called by OID through fmgr, are not
-- counted).  Rounds that push (applied with a reaction, a host rejection, a malformed
-- rejection, a conflict) and pull must count the C entry points and the test's own PL/pgSQL
-- helpers (tracking works) and no function of schema syncular in another language.
\set testdb syncular_t_round_path_c
\i sql/rules_helpers.psql

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": false},
     {"name": "done", "type": "boolean", "nullable": false}]}]}'::jsonb) ->> 'action' AS schema_action;
INSERT INTO public.grants VALUES ('u1', 'list_id', 'l1');
SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');

-- a row validator: title 'reject' is a host rejection, 'garbled' a malformed one
CREATE FUNCTION public.check_todo(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb,
                                  actor_id text, partition text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF new_row ->> 'title' = 'reject' THEN
    RAISE EXCEPTION 'no' USING ERRCODE = 'SY001', DETAIL = '{"code": "app.no", "details": {"k": 1}}';
  ELSIF new_row ->> 'title' = 'garbled' THEN
    RAISE EXCEPTION 'no' USING ERRCODE = 'SY001', DETAIL = '{"code": ';
  END IF;
END
$$;
SELECT syncular.set_row_validator('todos', 'public.check_todo(text, text, text, jsonb, jsonb, text, text)') IS NOT NULL AS validator;
-- a commit validator that accepts, and a planner with one record per commit
CREATE FUNCTION public.check_commit(operations jsonb, client_id text, client_commit_id text,
                                    actor_id text, partition text)
RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$;
SELECT syncular.set_commit_validator('public.check_commit(jsonb, text, text, text, text)') IS NOT NULL AS commit_validator;
CREATE FUNCTION public.plan(operations jsonb, client_id text, client_commit_id text,
                            actor_id text, partition text)
RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  RETURN jsonb_build_array(jsonb_build_object('key', client_commit_id, 'type', 'noted',
                                              'version', 1, 'payload', operations -> 0 -> 'rowId'));
END
$$;
SELECT syncular.set_reaction_planner('public.plan(jsonb, text, text, text, text)') IS NOT NULL AS planner;

SET track_functions = 'all';
BEGIN;
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-1', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": true}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-2', pg_temp.up('todos', '{"id": "t2", "list_id": "l1", "title": "reject", "done": true}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-3', pg_temp.up('todos', '{"id": "t3", "list_id": "l1", "title": "garbled", "done": true}'))));
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.pc('c-4', pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "stale"}', 0)),
  pg_temp.sub('s1', 'todos', '{"list_id": ["l1"]}')));
SELECT count(*) AS reactions FROM syncular.sync_reactions;
SELECT count(*) > 0 AS helpers_counted, bool_or(s.funcname = 'handle') AS handle_counted
  FROM pg_stat_xact_user_functions s
 WHERE s.schemaname LIKE 'pg_temp%' OR (s.schemaname = 'syncular' AND s.funcname = 'handle');
SELECT s.funcname, l.lanname, s.calls
  FROM pg_stat_xact_user_functions s
  JOIN pg_proc p ON p.oid = s.funcid JOIN pg_language l ON l.oid = p.prolang
 WHERE s.schemaname = 'syncular' AND l.lanname <> 'c' ORDER BY 1;
COMMIT;
RESET track_functions;

\i sql/rules_done.psql
