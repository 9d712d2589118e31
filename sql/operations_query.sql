-- Remote operations: registered queries through syncular.operations_http (REMOTE.md §2, §2.1,
-- §4, §5, §7): result shape and type normalization, maxRows, partition binding under hostile
-- SQL and params, scoped coverage failing closed, privileged authorization, every error code.
\set testdb syncular_t_ops_query
\i sql/operations_helpers.psql

SELECT syncular.register_query('todosInList',
  'SELECT id, title, done, n, score, meta, raw FROM todos WHERE list_id = $1 ORDER BY id',
  '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"},
    {"name": "done", "type": "boolean"}, {"name": "n", "type": "integer"}, {"name": "score", "type": "float"},
    {"name": "meta", "type": "json"}, {"name": "raw", "type": "bytes"}]', ARRAY['todos'],
  params => '[{"name": "listId", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "listId"}]', max_rows => 2) ->> 'action' AS registered;

-- success: declared columns only, normalized (integer as an integer, bytes as bytes), maxCommitSeq
SELECT pg_temp.q('p1', 'u1', 'todosInList', '{"listId": "l1"}');
-- the raw encoded body of a success (canonical encoding, members in order)
SELECT convert_from(body, 'UTF8') AS encoded
  FROM syncular.operations_http(convert_to(pg_temp.enc('{"revision": 1, "kind": "query", "clientId": "c1",
    "operationId": "todosInList", "params": {"listId": "l2"}}'), 'UTF8'), 'p1', 'u1');
-- empty result; the other partition sees only its own rows
SELECT pg_temp.q('p1', 'u1', 'todosInList', '{"listId": "l9"}') AS not_allowed_value;
SELECT pg_temp.q('p2', 'u1', 'todosInList', '{"listId": "l1"}') AS other_partition;
SELECT pg_temp.q('p3', 'u1', 'todosInList', '{"listId": "l1"}') AS unknown_partition;
-- '*' grants every value of the variable (not privilege): admin reads any list of the partition
SELECT pg_temp.q('p1', 'admin', 'todosInList', '{"listId": "l2"}') AS star_grant;

-- maxRows: 3 rows for maxRows 2 is operation.result_too_large, never a partial result
SELECT syncular.register_query('allTodos', 'SELECT t.id FROM todos t WHERE t.list_id = $1 OR $1 = ''any'' ORDER BY t.id',
  '[{"name": "id", "type": "string"}]', ARRAY['todos'], params => '[{"name": "l", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]', max_rows => 2) ->> 'action' AS registered;
SELECT pg_temp.q('p1', 'admin', 'allTodos', '{"l": "any"}') AS too_large;
SELECT pg_temp.q('p1', 'admin', 'allTodos', '{"l": "l1"}') AS exactly_max;

-- partition binding: a hostile query text (OR true, a subquery over the same table, a self join)
-- and hostile param values never reach another partition's rows
SELECT syncular.register_query('hostile',
  'SELECT a.id, (SELECT count(*) FROM todos) AS total FROM todos a LEFT JOIN todos b ON b.id <> a.id
    WHERE a.list_id = $1 OR true GROUP BY a.id ORDER BY a.id',
  '[{"name": "id", "type": "string"}, {"name": "total", "type": "integer"}]', ARRAY['todos'],
  params => '[{"name": "l", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]', max_rows => 100) ->> 'action' AS registered;
SELECT bound_sql FROM syncular.sync_operation_queries WHERE operation_id = 'hostile';
SELECT pg_temp.q('p1', 'admin', 'hostile', '{"l": "l1"}') AS p1_rows_only;
SELECT pg_temp.q('p2', 'admin', 'hostile', '{"l": "l1'' OR _sync_partition = ''p1"}') AS injection_is_a_value;
SELECT pg_temp.q('p2', 'admin', 'hostile', '{"l": "l1"}') AS p2_rows_only;

-- scoped coverage fails closed: a value outside the grant, resolver failure, a null or
-- non-scalar covered value, an actor without a grant
SELECT pg_temp.q('p1', 'u2', 'todosInList', '{"listId": "l1"}') AS outside_grant;
SELECT pg_temp.q('p1', 'boom', 'todosInList', '{"listId": "l1"}') AS resolver_raises;
SELECT pg_temp.q('p1', 'u1', 'todosInList', '{"listId": null}') AS null_value;
SELECT pg_temp.q('p1', 'nobody', 'todosInList', '{"listId": "l1"}') AS no_grant;
UPDATE syncular.sync_settings SET scope_resolver = NULL;
SELECT pg_temp.q('p1', 'admin', 'todosInList', '{"listId": "l1"}') AS no_resolver;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)');

-- privileged: the authorize function decides (false, NULL, raising)
CREATE FUNCTION public.auth_tags(actor text, part text, params jsonb) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF actor = 'raiser' THEN RAISE EXCEPTION 'authorize exploded'; END IF;
  RETURN CASE actor WHEN 'admin' THEN true WHEN 'maybe' THEN NULL ELSE params ->> 'org' = 'o1' END;
END $$;
SELECT syncular.register_query('tagsOf', 'SELECT id, label FROM tags WHERE org = $1 ORDER BY id',
  '[{"name": "id", "type": "string"}, {"name": "label", "type": "string"}]', ARRAY['tags'],
  params => '[{"name": "org", "type": "string"}]', mode => 'privileged',
  authorize => 'public.auth_tags(text,text,jsonb)') ->> 'action' AS registered;
SELECT pg_temp.q('p1', 'admin', 'tagsOf', '{"org": "o2"}') AS privileged_allowed;
SELECT pg_temp.q('p1', 'u1', 'tagsOf', '{"org": "o2"}') AS privileged_denied;
SELECT pg_temp.q('p1', 'maybe', 'tagsOf', '{"org": "o1"}') AS authorize_null;
SELECT pg_temp.q('p1', 'raiser', 'tagsOf', '{"org": "o1"}') AS authorize_raises;

-- operation.query_failed: a null in a non-nullable column, a value that does not fit its type,
-- SQL that fails at run time
SELECT syncular.register_query('badTypes', 'SELECT id, score AS missing FROM todos WHERE list_id = $1 ORDER BY id',
  '[{"name": "id", "type": "string"}, {"name": "missing", "type": "float", "nullable": false}]',
  ARRAY['todos'], params => '[{"name": "l", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]') ->> 'action' AS registered;
SELECT pg_temp.q('p1', 'u1', 'badTypes', '{"l": "l2"}') AS null_not_nullable;
SELECT syncular.register_query('badInt', 'SELECT id, title AS n FROM todos WHERE list_id = $1 ORDER BY id',
  '[{"name": "id", "type": "string"}, {"name": "n", "type": "integer"}]',
  ARRAY['todos'], params => '[{"name": "l", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]') ->> 'action' AS registered;
SELECT pg_temp.q('p1', 'u1', 'badInt', '{"l": "l2"}') AS type_mismatch;
SELECT syncular.register_query('divZero', 'SELECT id, 1 / (n - n) AS n FROM todos WHERE list_id = $1',
  '[{"name": "id", "type": "string"}, {"name": "n", "type": "integer"}]',
  ARRAY['todos'], params => '[{"name": "l", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]') ->> 'action' AS registered;
SELECT pg_temp.q('p1', 'u1', 'divZero', '{"l": "l2"}') AS runtime_error;
-- typed params: integer / float / boolean / bytes / json
SELECT syncular.register_query('typed', 'SELECT id FROM todos WHERE list_id = $1 AND n >= $2 AND (score IS NULL OR score < $3)
    AND done = $4 AND ($5::bytea IS NULL OR raw = $5) AND ($6::jsonb IS NULL OR meta @> $6) ORDER BY id',
  '[{"name": "id", "type": "string"}]', ARRAY['todos'],
  params => '[{"name": "l", "type": "string"}, {"name": "min", "type": "integer"}, {"name": "max", "type": "float"},
              {"name": "done", "type": "boolean"}, {"name": "raw", "type": "bytes"}, {"name": "meta", "type": "json"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]') ->> 'action' AS registered;
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "query", "clientId": "c1", "operationId": "typed",
  "params": {"l": "l1", "min": 1, "max": 2.5, "done": false, "raw": null, "meta": {"a": [1, "x"]}}}') AS typed;
SELECT convert_from(body, 'UTF8') AS bytes_param FROM syncular.operations_http(convert_to(
  '{"t":"object","v":[["revision",{"t":"integer","v":"1"}],["kind",{"t":"string","v":"query"}],["clientId",{"t":"string","v":"c1"}],'
  '["operationId",{"t":"string","v":"typed"}],["params",{"t":"object","v":[["l",{"t":"string","v":"l1"}],["min",{"t":"integer","v":"0"}],'
  '["max",{"t":"number","v":9}],["done",{"t":"boolean","v":false}],["raw",{"t":"bytes","v":"AAE="}],["meta",{"t":"null"}]]}]]}', 'UTF8'), 'p1', 'u1');
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "query", "clientId": "c1", "operationId": "typed",
  "params": {"l": "l1", "min": "1", "max": 2.5, "done": false, "raw": null, "meta": null}}') AS string_for_integer;

-- kept plans are per parameter types: the same SQL text registered with an integer and a string
-- param answers each with its own types
SELECT syncular.register_query('byN', 'SELECT id FROM todos WHERE list_id = $1 AND n::text = $2::text ORDER BY id',
  '[{"name": "id", "type": "string"}]', ARRAY['todos'],
  params => '[{"name": "l", "type": "string"}, {"name": "n", "type": "integer"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]') ->> 'action' AS registered;
SELECT syncular.register_query('byNText', 'SELECT id FROM todos WHERE list_id = $1 AND n::text = $2::text ORDER BY id',
  '[{"name": "id", "type": "string"}]', ARRAY['todos'],
  params => '[{"name": "l", "type": "string"}, {"name": "n", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "l"}]') ->> 'action' AS registered;
SELECT pg_temp.q('p1', 'u1', 'byN', '{"l": "l1", "n": 2}') AS by_integer;
SELECT pg_temp.q('p1', 'u1', 'byNText', '{"l": "l1", "n": "2"}') AS by_text;
SELECT pg_temp.q('p1', 'u1', 'byN', '{"l": "l1", "n": 2}') AS by_integer_again;

-- operation.invalid_request and friends: the envelope
CREATE FUNCTION pg_temp.raw(body text, ct text DEFAULT 'application/vnd.syncular.operations.v1+json') RETURNS text
LANGUAGE sql AS $$
  SELECT status || ' ' || content_type || ' ' || convert_from(r.body, 'UTF8')
    FROM syncular.operations_http(convert_to(body, 'UTF8'), 'p1', 'u1', ct) r
$$;
SELECT pg_temp.raw('{"t":"object","v":[]}', 'application/json') AS wrong_content_type;
SELECT pg_temp.raw('{"t":"object","v":[]}', 'Application/VND.syncular.operations.v1+json; charset=utf-8') AS content_type_params;
SELECT pg_temp.raw('not json') AS not_json;
SELECT pg_temp.raw('{"t":"integer","v":"01"}') AS non_canonical;
SELECT pg_temp.raw('{"t":"array","v":[]}') AS not_an_object;
SELECT pg_temp.op('p1', 'u1', '{"revision": 2, "kind": "query", "clientId": "c1", "operationId": "todosInList", "params": {}}') AS bad_revision;
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "watch", "clientId": "c1", "operationId": "todosInList", "params": {}}') AS bad_kind;
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "query", "clientId": "", "operationId": "todosInList", "params": {}}') AS empty_client;
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "query", "clientId": "c1", "operationId": "todosInList", "params": {}, "x": 1}') AS unknown_member;
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "query", "clientId": "c1", "operationId": "todosInList", "params": {}}') AS missing_param;
SELECT pg_temp.op('p1', 'u1', '{"revision": 1, "kind": "query", "clientId": "c1", "operationId": "todosInList", "params": [1]}') AS params_not_object;
SELECT pg_temp.q('p1', 'u1', 'todosInList', '{"listId": 5}') AS wrong_param_type;
-- sync.invalid_client_id: the reserved prefix, a clientId bound to another actor
SELECT pg_temp.q('p1', 'u1', 'todosInList', '{"listId": "l1"}', client => '["remote-command","u1","c1"]') AS reserved_prefix;
SELECT pg_temp.q('p1', 'u1', 'todosInList', '{"listId": "l1"}', client => 'seed') AS bound_to_admin;
-- operation.unknown: no such id; a command id asked as a query
CREATE FUNCTION public.cmd_none(actor text, part text, params jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '[]'::jsonb $$;
SELECT syncular.register_command('aCommand', 'public.auth_tags(text,text,jsonb)', 'public.cmd_none(text,text,jsonb)') ->> 'action' AS registered;
SELECT pg_temp.q('p1', 'u1', 'nope', '{}') AS unknown_id;
SELECT pg_temp.q('p1', 'u1', 'aCommand', '{}') AS wrong_kind;
-- a request over syncular.max_request_bytes
SET syncular.max_request_bytes = 1024;
SELECT pg_temp.q('p1', 'u1', 'todosInList', jsonb_build_object('listId', repeat('x', 1000))) AS too_big;
RESET syncular.max_request_bytes;
-- nothing was written by any of it
SELECT count(*) AS commits FROM syncular.sync_commits;

\i sql/operations_done.psql
