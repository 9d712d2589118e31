-- hooks_registration: syncular.set_row_validator / set_commit_validator / set_reaction_planner
-- (signature checks, unknown tables, unregistering) and syncular._validator_rejection, the rule
-- that turns an error raised by a hook into a push rejection (push-and-pull.md §2.7, §2.8;
-- barrier-rfc0007.md §8.4; docs/hooks.md).  The examples of docs/hooks.md run here verbatim.
-- pg_regress runs every test in one database: this one works in a private database so that
-- it neither sees nor leaves synced tables, registrations or catalog rows.
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_hooks_registration;
\c syncular_t_hooks_registration
\i sql/test_helpers.psql
\set VERBOSITY terse

-- only "<SQLSTATE> <code>" of the error q raises, or 'ok'
CREATE FUNCTION pg_temp.code_of(q text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN r LIKE '% | %' THEN split_part(r, ' ', 1) || ' ' || split_part(split_part(r, ' | ', 2), ' ', 1) ELSE r END
    FROM pg_temp.try(q) r
$$;
-- what the engine makes of an error a hook raises: the rejection, or "constraint_violation"
CREATE FUNCTION pg_temp.reject_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN coalesce(syncular._validator_rejection(st, det, msg)::text, 'constraint_violation (' || st || ')');
END
$$;
CREATE VIEW pg_temp.hooks AS
SELECT (SELECT commit_validator::text FROM syncular.sync_settings) AS commit_validator,
       (SELECT reaction_planner::text FROM syncular.sync_settings) AS reaction_planner,
       (SELECT coalesce(string_agg(tbl || ' -> ' || fn::text, '; ' ORDER BY tbl), '-') FROM syncular.sync_row_validators) AS row_validators;

-- candidate functions: good ones and one per signature defect
CREATE FUNCTION public.rv_ok(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb, actor_id text, partition text)
RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.rv_renamed(a text, b text, c text, d jsonb, e jsonb, f text, g text)
RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.rv_strict(text, text, text, jsonb, jsonb, text, text)
RETURNS void LANGUAGE sql STRICT AS $$ SELECT $$;
CREATE FUNCTION public.rv_six(text, text, text, jsonb, jsonb, text)
RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.rv_eight(text, text, text, jsonb, jsonb, text, text, text)
RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.rv_json(text, text, text, json, json, text, text)
RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.rv_bool(text, text, text, jsonb, jsonb, text, text)
RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
CREATE FUNCTION public.rv_setof(text, text, text, jsonb, jsonb, text, text)
RETURNS SETOF void LANGUAGE sql AS $$ SELECT $$;
CREATE PROCEDURE public.rv_proc(text, text, text, jsonb, jsonb, text, text) LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.rv_variadic(text, text, text, jsonb, jsonb, text, VARIADIC text[])
RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.cv_ok(operations jsonb, client_id text, client_commit_id text, actor_id text, partition text)
RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.cv_strict(jsonb, text, text, text, text)
RETURNS void LANGUAGE sql STRICT AS $$ SELECT $$;
CREATE FUNCTION public.cv_jsonb(jsonb, text, text, text, text)
RETURNS jsonb LANGUAGE sql AS $$ SELECT '[]'::jsonb $$;
CREATE FUNCTION public.cv_order(text, jsonb, text, text, text)
RETURNS void LANGUAGE sql AS $$ SELECT $$;
CREATE FUNCTION public.cv_four(jsonb, text, text, text)
RETURNS jsonb LANGUAGE sql AS $$ SELECT '[]'::jsonb $$;
CREATE FUNCTION public.cv_setof(jsonb, text, text, text, text)
RETURNS SETOF jsonb LANGUAGE sql AS $$ SELECT '[]'::jsonb $$;
CREATE FUNCTION public.cv_json(jsonb, text, text, text, text)
RETURNS json LANGUAGE sql AS $$ SELECT '[]'::json $$;
CREATE FUNCTION public.cv_sfunc(jsonb, jsonb, text, text, text, text)
RETURNS jsonb LANGUAGE sql AS $$ SELECT $1 $$;
CREATE AGGREGATE public.cv_agg(jsonb, text, text, text, text) (SFUNC = public.cv_sfunc, STYPE = jsonb);

-- ---------------------------------------------------------------------------------------------
-- before any schema: the commit validator and the planner register (creating the settings row);
-- a row validator cannot (no synced table exists)
SELECT count(*) AS settings_rows FROM syncular.sync_settings;
SELECT syncular.set_commit_validator('public.cv_ok(jsonb, text, text, text, text)');
SELECT syncular.set_reaction_planner('public.cv_jsonb(jsonb, text, text, text, text)');
SELECT id, app_schema, compiled IS NULL AS no_compiled, scope_resolver, commit_validator, reaction_planner FROM syncular.sync_settings;
SELECT pg_temp.try($$SELECT syncular.set_row_validator('todos', 'public.rv_ok(text, text, text, jsonb, jsonb, text, text)')$$) AS no_schema;

-- the schema of docs/hooks.md (keeps the registrations above)
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "lists", "primaryKey": "id", "scopes": ["owner:{owner_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "owner_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": false}]},
  {"name": "todos", "primaryKey": "id", "scopes": ["owner:{owner_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "owner_id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": false},
    {"name": "done", "type": "boolean", "nullable": false}]}]}'::jsonb, '[]'::jsonb, 'public') ->> 'action' AS ensure_schema;
SELECT * FROM pg_temp.hooks;

-- ---------------------------------------------------------------------------------------------
-- row validators
SELECT xmin::text AS settings_xmin_0 FROM syncular.sync_settings \gset
SELECT syncular.set_row_validator('todos', 'public.rv_ok(text, text, text, jsonb, jsonb, text, text)');
SELECT * FROM pg_temp.hooks;
-- every registration writes a new settings row version (the C cache key)
SELECT xmin::text <> :'settings_xmin_0' AS settings_row_rewritten FROM syncular.sync_settings;
-- argument names are free; registering again replaces
SELECT syncular.set_row_validator('todos', 'public.rv_renamed(text, text, text, jsonb, jsonb, text, text)');
SELECT syncular.set_row_validator('lists', 'public.rv_ok(text, text, text, jsonb, jsonb, text, text)');
SELECT * FROM pg_temp.hooks;
-- refusals: nothing changes
SELECT pg_temp.try($$SELECT syncular.set_row_validator('todos', 'public.rv_strict(text, text, text, jsonb, jsonb, text, text)')$$) AS strict_refused;
SELECT f AS function, pg_temp.code_of(format('SELECT syncular.set_row_validator(''todos'', %L)', f)) AS result
  FROM unnest(ARRAY['public.rv_strict(text, text, text, jsonb, jsonb, text, text)',
                    'public.rv_six(text, text, text, jsonb, jsonb, text)',
                    'public.rv_eight(text, text, text, jsonb, jsonb, text, text, text)',
                    'public.rv_json(text, text, text, json, json, text, text)',
                    'public.rv_bool(text, text, text, jsonb, jsonb, text, text)',
                    'public.rv_setof(text, text, text, jsonb, jsonb, text, text)',
                    'public.rv_proc(text, text, text, jsonb, jsonb, text, text)',
                    'public.rv_variadic(text, text, text, jsonb, jsonb, text, text[])',
                    'public.cv_ok(jsonb, text, text, text, text)']) f;
SELECT pg_temp.try($$SELECT syncular.set_row_validator('nope', 'public.rv_ok(text, text, text, jsonb, jsonb, text, text)')$$) AS unknown_table,
       pg_temp.try($$SELECT syncular.set_row_validator('Todos', 'public.rv_ok(text, text, text, jsonb, jsonb, text, text)')$$) AS case_matters,
       pg_temp.try($$SELECT syncular.set_row_validator(NULL, 'public.rv_ok(text, text, text, jsonb, jsonb, text, text)')$$) AS null_table;
SELECT pg_temp.try($$SELECT syncular.set_row_validator('nope', NULL)$$) AS unregister_unknown_table;
-- the unknown table is checked before the signature
SELECT pg_temp.try($$SELECT syncular.set_row_validator('nope', 'public.rv_bool(text, text, text, jsonb, jsonb, text, text)')$$) AS unknown_and_bad;
SELECT * FROM pg_temp.hooks;
-- unregister (twice: the second is a no-op)
SELECT syncular.set_row_validator('lists', NULL);
SELECT syncular.set_row_validator('lists', NULL);
SELECT * FROM pg_temp.hooks;

-- ---------------------------------------------------------------------------------------------
-- commit validator and reaction planner
SELECT pg_temp.try($$SELECT syncular.set_commit_validator('public.cv_jsonb(jsonb, text, text, text, text)')$$) AS commit_validator_returning_jsonb;
SELECT pg_temp.try($$SELECT syncular.set_reaction_planner('public.cv_ok(jsonb, text, text, text, text)')$$) AS planner_returning_void;
SELECT f AS function, pg_temp.code_of(format('SELECT syncular.set_commit_validator(%L)', f)) AS commit_validator,
       pg_temp.code_of(format('SELECT syncular.set_reaction_planner(%L)', f)) AS reaction_planner
  FROM unnest(ARRAY['public.cv_ok(jsonb, text, text, text, text)',
                    'public.cv_strict(jsonb, text, text, text, text)',
                    'public.cv_jsonb(jsonb, text, text, text, text)',
                    'public.cv_order(text, jsonb, text, text, text)',
                    'public.cv_four(jsonb, text, text, text)',
                    'public.cv_setof(jsonb, text, text, text, text)',
                    'public.cv_json(jsonb, text, text, text, text)',
                    'public.cv_agg(jsonb, text, text, text, text)',
                    'public.rv_ok(text, text, text, jsonb, jsonb, text, text)']) f;
-- the last successful registration of each won (cv_strict: a STRICT commit validator is fine,
-- its arguments are never NULL; cv_jsonb for the planner)
SELECT * FROM pg_temp.hooks;
SELECT syncular.set_commit_validator(NULL), syncular.set_reaction_planner(NULL);
SELECT * FROM pg_temp.hooks;
SELECT pg_temp.try($$SELECT syncular.set_commit_validator('public.no_such_function(jsonb)')$$) AS missing_function;

-- ---------------------------------------------------------------------------------------------
-- _validator_rejection: well-formed SY001 rejections
SELECT syncular._validator_rejection('SY001', '{"code": "app.quota", "message": "list is full", "details": {"reason": "quota", "fieldPaths": ["items"]}, "opIndex": 2}') AS full;
SELECT syncular._validator_rejection('SY001', '{"code": "app.quota"}', 'raise message') AS message_from_raise,
       syncular._validator_rejection('SY001', '{"code": "app.quota"}') AS message_from_code,
       syncular._validator_rejection('SY001', '{"code": "app.quota", "message": ""}', '') AS empty_messages,
       syncular._validator_rejection('SY001', '{"code": "app.quota", "message": null}', 'm') AS null_message;
SELECT syncular._validator_rejection('SY001', '{"code": "x", "details": null, "opIndex": null, "extra": [1]}') AS nulls_and_extras,
       syncular._validator_rejection('SY001', '{"code": "x", "details": {}}') AS empty_details,
       syncular._validator_rejection('SY001', '{"code": "x", "opIndex": 0}') AS op_0,
       syncular._validator_rejection('SY001', '{"code": "x", "opIndex": 3.0}') AS op_3_0,
       syncular._validator_rejection('SY001', '{"code": "x", "opIndex": 2147483647}') AS op_max;
-- only the five reserved prefixes are refused, case-sensitively and only as prefixes
SELECT c AS code, syncular._validator_rejection('SY001', json_build_object('code', c)::text) ->> 'code' AS accepted
  FROM unnest(ARRAY['sync.quota', 'blob.quota', 'operation.quota', 'presence.quota', 'client.quota',
                    'sync.', 'sync.storage.hook_signature', 'blob.not_found',
                    'Sync.quota', 'SYNC.quota', 'syncquota', 'sync', 'app.sync.quota', 'clients.quota',
                    'operations.x', ' sync.x', 'x']) c;
-- details: at most 4,096 bytes of compact JSON; {"k":"<s>"} is 8 + len(s) bytes
SELECT syncular._validator_rejection('SY001', json_build_object('code', 'x', 'details', json_build_object('k', repeat('d', 4088)))::text) IS NOT NULL AS details_4096,
       syncular._validator_rejection('SY001', json_build_object('code', 'x', 'details', json_build_object('k', repeat('d', 4089)))::text) IS NOT NULL AS details_4097,
       syncular._validator_rejection('SY001', json_build_object('code', 'x', 'details', json_build_object('k', repeat('é', 2044)))::text) IS NOT NULL AS details_4096_utf8,
       syncular._validator_rejection('SY001', json_build_object('code', 'x', 'details', json_build_object('k', repeat('é', 2045)))::text) IS NOT NULL AS details_4098_utf8;
-- everything else is NULL (the engine answers sync.constraint_violation)
SELECT label, syncular._validator_rejection(st, det, 'm') IS NULL AS is_null
  FROM (VALUES ('P0001 (plain RAISE)', 'P0001', '{"code": "app.quota"}'),
               ('22023 (syncular._raise)', '22023', '{"code": "app.quota"}'),
               ('SY002', 'SY002', '{"code": "app.quota"}'),
               ('sy001 (lower case)', 'sy001', '{"code": "app.quota"}'),
               ('NULL sqlstate', NULL, '{"code": "app.quota"}'),
               ('NULL detail', 'SY001', NULL),
               ('detail not JSON', 'SY001', 'app.quota'),
               ('detail empty', 'SY001', ''),
               ('detail \u0000', 'SY001', '{"code": "app.quota", "message": "\u0000"}'),
               ('detail array', 'SY001', '["app.quota"]'),
               ('detail string', 'SY001', '"app.quota"'),
               ('detail null', 'SY001', 'null'),
               ('code missing', 'SY001', '{"message": "m"}'),
               ('code null', 'SY001', '{"code": null}'),
               ('code empty', 'SY001', '{"code": ""}'),
               ('code number', 'SY001', '{"code": 42}'),
               ('code object', 'SY001', '{"code": {"c": "app.quota"}}'),
               ('message number', 'SY001', '{"code": "x", "message": 1}'),
               ('message object', 'SY001', '{"code": "x", "message": {"m": 1}}'),
               ('details array', 'SY001', '{"code": "x", "details": ["a"]}'),
               ('details string', 'SY001', '{"code": "x", "details": "a"}'),
               ('opIndex -1', 'SY001', '{"code": "x", "opIndex": -1}'),
               ('opIndex 1.5', 'SY001', '{"code": "x", "opIndex": 1.5}'),
               ('opIndex "1"', 'SY001', '{"code": "x", "opIndex": "1"}'),
               ('opIndex 2^31', 'SY001', '{"code": "x", "opIndex": 2147483648}'),
               ('opIndex true', 'SY001', '{"code": "x", "opIndex": true}')) v(label, st, det);

-- end to end: real errors raised by hook code, decoded as the engine will
SELECT pg_temp.reject_of($q$DO $x$ BEGIN RAISE EXCEPTION 'the raise message' USING ERRCODE = 'SY001', DETAIL = '{"code": "app.a"}'; END $x$$q$) AS sy001_message_from_raise;
SELECT pg_temp.reject_of($q$DO $x$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = 'SY001', DETAIL = json_build_object('code', 'app.q"uote', 'message', 'it''s "quoted"', 'opIndex', 1)::text; END $x$$q$) AS sy001_built_detail;
SELECT pg_temp.reject_of($q$DO $x$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = 'SY001'; END $x$$q$) AS sy001_without_detail;
SELECT pg_temp.reject_of($q$DO $x$ BEGIN RAISE EXCEPTION 'plain' USING DETAIL = '{"code": "app.a"}'; END $x$$q$) AS plain_raise;
SELECT pg_temp.reject_of($$SELECT syncular._raise('app.quota', 'via _raise', '{"a": 1}')$$) AS via_syncular_raise;
SELECT pg_temp.reject_of($$SELECT 1 / 0$$) AS division_by_zero;

-- ---------------------------------------------------------------------------------------------
-- the examples of docs/hooks.md, verbatim
CREATE FUNCTION public.validate_todo(op text, tbl text, row_id text, new_row jsonb,
                                     stored_row jsonb, actor_id text, partition text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF op = 'upsert' AND char_length(new_row ->> 'title') > 100 THEN
    RAISE EXCEPTION 'todo title too long' USING ERRCODE = 'SY001',
      DETAIL = json_build_object(
        'code', 'app.title_too_long',
        'message', 'a todo title has at most 100 characters',
        'details', json_build_object('fieldPaths', json_build_array('title'),
                                     'reason', 'title_too_long'))::text;
  END IF;
END
$$;
SELECT syncular.set_row_validator('todos',
  'public.validate_todo(text, text, text, jsonb, jsonb, text, text)');

CREATE FUNCTION public.validate_commit(operations jsonb, client_id text, client_commit_id text,
                                       actor_id text, partition text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  o jsonb;
BEGIN
  FOR o IN SELECT value FROM jsonb_array_elements(operations) LOOP
    IF o ->> 'table' = 'lists' AND o ->> 'op' = 'upsert'
       AND jsonb_typeof(o -> 'stored') IS DISTINCT FROM 'object'          -- a new list
       AND NOT EXISTS (SELECT 1 FROM public.todos t
                        WHERE t._sync_partition = validate_commit.partition
                          AND t.list_id = o ->> 'rowId') THEN
      RAISE EXCEPTION 'list without todo' USING ERRCODE = 'SY001',
        DETAIL = json_build_object(
          'code', 'app.list_needs_todo',
          'message', 'a new list must be pushed with at least one todo',
          'details', json_build_object('requiredAction', 'add_todo'),
          'opIndex', (o ->> 'opIndex')::int)::text;
    END IF;
  END LOOP;
END
$$;
SELECT syncular.set_commit_validator(
  'public.validate_commit(jsonb, text, text, text, text)');

CREATE FUNCTION public.plan_reactions(operations jsonb, client_id text, client_commit_id text,
                                      actor_id text, partition text)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object(
           'key', 'todo-done:' || (o ->> 'rowId') || ':' || (o ->> 'opIndex'),
           'type', 'email.todo_done',
           'version', 1,
           'payload', jsonb_build_object('to', actor_id, 'todoId', o ->> 'rowId',
                                         'title', o -> 'row' ->> 'title'),
           'maxAttempts', 5) ORDER BY (o ->> 'opIndex')::int), '[]'::jsonb)
    FROM jsonb_array_elements(operations) o
   WHERE o ->> 'table' = 'todos' AND o ->> 'op' = 'upsert'
     AND (o -> 'row' ->> 'done')::boolean
     AND NOT coalesce((o -> 'stored' ->> 'done')::boolean, false)
$$;
SELECT syncular.set_reaction_planner(
  'public.plan_reactions(jsonb, text, text, text, text)');
SELECT * FROM pg_temp.hooks;

-- the row validator: 100 characters pass, 101 are rejected; deletes pass
SELECT pg_temp.reject_of(format($$SELECT public.validate_todo('upsert', 'todos', 't1', %L, NULL, 'alice', 'default')$$,
         jsonb_build_object('id', 't1', 'owner_id', 'alice', 'list_id', 'l1', 'title', repeat('é', 100), 'done', false))) AS title_100;
SELECT pg_temp.reject_of(format($$SELECT public.validate_todo('upsert', 'todos', 't1', %L, NULL, 'alice', 'default')$$,
         jsonb_build_object('id', 't1', 'owner_id', 'alice', 'list_id', 'l1', 'title', repeat('é', 101), 'done', false))) AS title_101;
SELECT pg_temp.reject_of($$SELECT public.validate_todo('delete', 'todos', 't1', NULL, '{"title": "x"}', 'alice', 'default')$$) AS a_delete;
-- the commit validator: a staged todo of the same commit (written before the validator runs)
-- satisfies it; a todo in another partition does not
\set ops '[{"opIndex": 0, "op": "upsert", "table": "todos", "rowId": "t1", "row": {"id": "t1", "owner_id": "alice", "list_id": "l1", "title": "milk", "done": false}, "stored": null, "storedServerVersion": null, "nextServerVersion": 1}, {"opIndex": 1, "op": "upsert", "table": "lists", "rowId": "l1", "row": {"id": "l1", "owner_id": "alice", "title": "groceries"}, "stored": null, "storedServerVersion": null, "nextServerVersion": 1}, {"opIndex": 2, "op": "upsert", "table": "lists", "rowId": "l2", "row": {"id": "l2", "owner_id": "alice", "title": "chores"}, "stored": null, "storedServerVersion": null, "nextServerVersion": 1}]'
BEGIN;
INSERT INTO public.todos (_sync_partition, _sync_row_id, id, owner_id, list_id, title, done,
                          _sync_server_version, _sync_scopes, _sync_payload)
VALUES ('default', 't1', 't1', 'alice', 'l1', 'milk', false, 1, '{"owner_id": "alice"}', '\x00'),
       ('other', 't9', 't9', 'alice', 'l2', 'elsewhere', false, 1, '{"owner_id": "alice"}', '\x00');
SELECT pg_temp.reject_of(format($$SELECT public.validate_commit(%L, 'phone-A', 'A-1', 'alice', 'default')$$, :'ops')) AS l2_without_todo;
SELECT pg_temp.reject_of(format($$SELECT public.validate_commit(%L, 'phone-A', 'A-1', 'alice', 'default')$$,
         (:'ops'::jsonb #- '{2}')::text)) AS l1_only;
ROLLBACK;
SELECT pg_temp.reject_of(format($$SELECT public.validate_commit(%L, 'phone-A', 'A-1', 'alice', 'default')$$,
         (:'ops'::jsonb #- '{2}')::text)) AS l1_when_nothing_is_staged;
-- the planner: one email per todo that became done (t2 twice in the commit: two keys); the
-- records go through _enqueue_reactions unchanged
\set pops '[{"opIndex": 0, "op": "upsert", "table": "todos", "rowId": "t1", "row": {"id": "t1", "title": "milk", "done": true}, "stored": {"id": "t1", "title": "milk", "done": false}, "storedServerVersion": 1, "nextServerVersion": 2}, {"opIndex": 1, "op": "upsert", "table": "todos", "rowId": "t2", "row": {"id": "t2", "title": "bread", "done": true}, "stored": null, "storedServerVersion": null, "nextServerVersion": 1}, {"opIndex": 2, "op": "upsert", "table": "todos", "rowId": "t3", "row": {"id": "t3", "title": "eggs", "done": true}, "stored": {"id": "t3", "title": "eggs", "done": true}, "storedServerVersion": 4, "nextServerVersion": 5}, {"opIndex": 3, "op": "delete", "table": "todos", "rowId": "t4", "row": null, "stored": {"id": "t4", "done": false}, "storedServerVersion": 1, "nextServerVersion": null}, {"opIndex": 4, "op": "upsert", "table": "lists", "rowId": "l1", "row": {"id": "l1", "done": true}, "stored": null, "storedServerVersion": null, "nextServerVersion": 1}, {"opIndex": 5, "op": "upsert", "table": "todos", "rowId": "t2", "row": {"id": "t2", "title": "rye bread", "done": true}, "stored": null, "storedServerVersion": null, "nextServerVersion": 1}]'
SELECT jsonb_pretty(public.plan_reactions(:'pops', 'phone-A', 'A-7', 'alice', 'default')) AS planned;
SELECT public.plan_reactions('[]', 'phone-A', 'A-8', 'alice', 'default') AS nothing_planned;
SELECT syncular._enqueue_reactions('default', 'phone-A', 'A-7', 12,
         public.plan_reactions(:'pops', 'phone-A', 'A-7', 'alice', 'default'), 5000) AS enqueued;
SELECT idempotency_key, type, version, max_attempts, status, source_commit_seq, payload FROM syncular.sync_reactions ORDER BY idempotency_key;

\c :orig_db
DROP DATABASE syncular_t_hooks_registration;
