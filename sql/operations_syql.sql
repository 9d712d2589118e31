-- SYQL statement variants of a queries IR (queryIrVersion 3, syql.plan): register_queries prepares
-- every variant at registration (one outside the common SQL subset refuses the query, naming it
-- and PostgreSQL's error, nothing stored), and each request runs the variant the generated client
-- selects: activation mask of the present controls (backend variants), the sort profile, the
-- condition-active binds (backend neutralize), the page size limit.
\set testdb syncular_t_ops_syql
\i sql/operations_helpers.psql

-- ir(queries): a queries IR document
CREATE FUNCTION pg_temp.ir(queries jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('queryIrVersion', 3, 'queries', queries)
$$;
-- the variants plan of todoSearch: controls needle (a value) and openOnly (default false), sort
-- profiles idAsc / idDesc, limit pageSize (default 2, at most 3): 4 masks x 2 profiles
CREATE FUNCTION pg_temp.search_query(bad_mask int DEFAULT -1) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'name', 'todoSearch',
    'sql', 'select id, title from todos where list_id = :listId order by id asc limit :__syqlLimit',
    'params', '[{"name": "listId", "langName": "listId", "type": "string"},
                {"name": "__syqlLimit", "langName": "__syqlLimit", "type": "integer"}]'::jsonb,
    'columns', '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string", "nullable": true}]'::jsonb,
    'tables', '["todos"]'::jsonb,
    'reactive', '{"dependencies": [{"table": "todos", "scopes": [{"variable": "list_id", "pattern": "list:{list_id}", "params": ["listId"]}]}]}'::jsonb,
    'syql', jsonb_build_object('revision', 1,
      'inputs', '[{"kind": "value", "name": "listId", "langName": "listId", "type": "string", "nullable": false, "required": true},
                  {"kind": "value", "name": "needle", "langName": "needle", "type": "string", "nullable": false, "required": false},
                  {"kind": "value", "name": "openOnly", "langName": "openOnly", "type": "boolean", "nullable": false, "required": false, "default": false},
                  {"kind": "sort", "name": "sortBy", "langName": "sortBy", "defaultProfile": "idAsc",
                   "profiles": [{"name": "idAsc", "langName": "idAsc"}, {"name": "idDesc", "langName": "idDesc"}]},
                  {"kind": "limit", "name": "pageSize", "langName": "pageSize", "defaultSize": 2, "maxSize": 3}]'::jsonb,
      'plan', jsonb_build_object('backend', 'variants', 'activationControls', '["needle", "openOnly"]'::jsonb,
        'conditions', '[{"controls": ["needle"]}, {"controls": ["openOnly"]}]'::jsonb,
        'statements', (SELECT jsonb_agg(jsonb_build_object(
            'activationMask', m, 'sortProfile', p,
            'positionalSql', 'select id, title from todos where list_id = ?'
               || CASE WHEN m & 1 = 1 THEN ' and title like ''%'' || ? || ''%''' ELSE '' END
               || CASE WHEN m & 2 = 2 THEN ' and done = false' ELSE '' END
               || CASE WHEN m = bad_mask THEN ' and 1' ELSE '' END
               || ' order by id ' || CASE p WHEN 'idAsc' THEN 'asc' ELSE 'desc' END || ' limit ?',
            'binds', '[{"kind": "value", "name": "listId", "type": "string", "input": "listId"}]'::jsonb
               || CASE WHEN m & 1 = 1 THEN '[{"kind": "value", "name": "needle", "type": "string", "input": "needle"}]'::jsonb
                       ELSE '[]'::jsonb END
               || '[{"kind": "limit", "name": "__syqlLimit", "type": "integer", "input": "pageSize"}]'::jsonb)
            ORDER BY m, p) FROM generate_series(0, 3) m, unnest(ARRAY['idAsc', 'idDesc']) p))))
$$;
-- a neutralize plan: one statement, the needle condition switched by a condition-active bind
CREATE FUNCTION pg_temp.neutral_query() RETURNS jsonb LANGUAGE sql AS $$
  SELECT '{"name": "todoNeutral",
    "sql": "select id from todos where list_id = :listId and (not :__syqlActive0 or title like ''%'' || :needle || ''%'') order by id",
    "params": [{"name": "listId", "type": "string"}, {"name": "__syqlActive0", "type": "boolean"}, {"name": "needle", "type": "string"}],
    "columns": [{"name": "id", "type": "string", "nullable": false}],
    "tables": ["todos"],
    "reactive": {"dependencies": [{"table": "todos", "scopes": [{"variable": "list_id", "pattern": "list:{list_id}", "params": ["listId"]}]}]},
    "syql": {"revision": 1,
      "inputs": [{"kind": "value", "name": "listId", "langName": "listId", "type": "string", "nullable": false, "required": true},
                 {"kind": "value", "name": "needle", "langName": "needle", "type": "string", "nullable": false, "required": false}],
      "plan": {"backend": "neutralize", "activationControls": ["needle"],
        "conditions": [{"controls": ["needle"], "bind": "__syqlActive0"}],
        "statements": [{"positionalSql": "select id from todos where list_id = ? and (not ? or title like ''%'' || ? || ''%'') order by id",
          "binds": [{"kind": "value", "name": "listId", "type": "string", "input": "listId"},
                    {"kind": "condition-active", "name": "__syqlActive0", "type": "boolean", "condition": 0, "controls": ["needle"]},
                    {"kind": "value", "name": "needle", "type": "string", "input": "needle"}]}]}}}'::jsonb
$$;

-- a variant outside the common SQL subset (SQLite's "and 1") refuses the query, naming it and
-- PostgreSQL's error; nothing is stored
SELECT pg_temp.try($$SELECT syncular.register_queries(pg_temp.ir(jsonb_build_array(pg_temp.search_query(2))))$$) AS bad_variant;
SELECT count(*) AS stored FROM syncular.sync_operation_queries;

-- every variant prepared: 8 statements stored, bound to the partition
SELECT syncular.register_queries(pg_temp.ir(jsonb_build_array(pg_temp.search_query(), pg_temp.neutral_query()))) AS registered;
SELECT operation_id, syql ->> 'backend' AS backend, jsonb_array_length(syql -> 'statements') AS statements,
       params, coverage
  FROM syncular.sync_operation_queries ORDER BY 1;
SELECT syql #>> '{statements,7,boundSql}' AS mask3_desc FROM syncular.sync_operation_queries WHERE operation_id = 'todoSearch';
-- the same IR again: unchanged
SELECT syncular.register_queries(pg_temp.ir(jsonb_build_array(pg_temp.search_query(), pg_temp.neutral_query()))) AS again;

-- the variant a request selects (p1: t1 "one" open, t2 "two" done in l1; t3 in l2)
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1"}') AS default_variant;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "sortBy": "idDesc"}') AS sorted_desc;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "needle": "tw"}') AS needle;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "openOnly": true}') AS open_only;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "openOnly": false}') AS open_only_false;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "needle": "o", "openOnly": true, "sortBy": "idDesc"}') AS all_controls;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "pageSize": 1}') AS page_of_one;
-- bad inputs
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "pageSize": 4}') AS page_too_large;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "sortBy": "titleAsc"}') AS unknown_profile;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "color": "red"}') AS unknown_input;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"needle": "o"}') AS missing_required;
SELECT pg_temp.q('p1', 'u1', 'todoSearch', '{"listId": "l1", "needle": 5}') AS mistyped;
-- coverage still applies (listId covers list_id)
SELECT pg_temp.q('p1', 'u2', 'todoSearch', '{"listId": "l1"}') AS forbidden;
-- neutralize: the condition-active bind switches the needle filter
SELECT pg_temp.q('p1', 'u1', 'todoNeutral', '{"listId": "l1"}') AS neutral_inactive;
SELECT pg_temp.q('p1', 'u1', 'todoNeutral', '{"listId": "l1", "needle": "on"}') AS neutral_active;
-- a watch of a variant query reruns through the same selection
SELECT outcome, pg_temp.dec(convert_from(message, 'UTF8')::jsonb) -> 'rows' AS rows
  FROM syncular.operations_watch_rerun('p1', jsonb_build_array(jsonb_build_object('w', 1, 'seq', -1, 'actorId', 'u1',
    'message', pg_temp.enc('{"revision": 1, "kind": "watch", "watchId": "w", "clientId": "c1", "operationId": "todoSearch",
                             "params": {"listId": "l1", "sortBy": "idDesc"}}')::jsonb)));

-- registering the plain query again drops the variants
SELECT syncular.register_queries(pg_temp.ir(jsonb_build_array(pg_temp.search_query() - 'syql'))) -> 'queries' -> 0 ->> 'action' AS plain_again;
SELECT syql IS NULL AS no_variants FROM syncular.sync_operation_queries WHERE operation_id = 'todoSearch';

\i sql/operations_done.psql
