-- Remote operations (REMOTE.md §2, §2.1, §3): registration of queries and commands, every
-- refusal, idempotency, the queries IR, removal with the schema.
\set testdb syncular_t_ops_register
\i sql/operations_helpers.psql

-- a scoped query: coverage for the one scope variable of todos
SELECT syncular.register_query('todosInList',
  'SELECT id, title, done FROM todos WHERE list_id = $1 ORDER BY id',
  '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"},
    {"name": "done", "type": "boolean"}]', ARRAY['todos'],
  params => '[{"name": "listId", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "listId"}]', max_rows => 2);
-- again: unchanged; then changed
SELECT syncular.register_query('todosInList',
  'SELECT id, title, done FROM todos WHERE list_id = $1 ORDER BY id',
  '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"},
    {"name": "done", "type": "boolean"}]', ARRAY['todos'],
  params => '[{"name": "listId", "type": "string"}]',
  coverage => '[{"table": "todos", "variable": "list_id", "param": "listId"}]', max_rows => 2) ->> 'action' AS again;
-- the bound SQL: the app table is a relation of the partition ($2)
SELECT bound_sql FROM syncular.sync_operation_queries WHERE operation_id = 'todosInList';

-- privileged, with an authorize function
CREATE FUNCTION public.is_admin(actor text, part text, params jsonb) RETURNS boolean
LANGUAGE sql AS $$ SELECT actor = 'admin' $$;
SELECT syncular.register_query('allTags', 'SELECT t.id, t.label FROM tags t ORDER BY t.id',
  '[{"name": "id", "type": "string"}, {"name": "label", "type": "string"}]', ARRAY['tags'],
  mode => 'privileged', authorize => 'public.is_admin(text,text,jsonb)') ->> 'action' AS privileged;

-- every refusal: sync.storage.operation_invalid (22023) with its rule
CREATE FUNCTION pg_temp.reg(sql text, cols jsonb DEFAULT '[{"name": "id", "type": "string"}]',
                            tbls text[] DEFAULT ARRAY['todos'],
                            params jsonb DEFAULT '[{"name": "l", "type": "string"}]',
                            cov jsonb DEFAULT '[{"table": "todos", "variable": "list_id", "param": "l"}]',
                            mode text DEFAULT 'scoped', auth regprocedure DEFAULT NULL, mr int DEFAULT 10)
RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(r ->> 'code' || ' ' || (r ->> 'sqlstate') || ' ' || coalesce(r -> 'details' ->> 'rule', '-') || ': ' || (r ->> 'message'), 'ok')
    FROM pg_temp.try(format('SELECT syncular.register_query(%L, %L, %L, %L, %L, %L, %L, %L, %s)',
                            'q', sql, cols, tbls, params, mode, cov, auth, mr)) r
$$;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1') AS baseline;
-- result columns: missing, empty, duplicate, bad type, absent from the result
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', cols => NULL) AS missing_columns;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', cols => '[]') AS empty_columns;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1',
  cols => '[{"name": "id", "type": "string"}, {"name": "id", "type": "string"}]') AS duplicate_columns;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', cols => '[{"name": "id", "type": "date"}]') AS bad_type;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', cols => '[{"name": "title", "type": "string"}]') AS column_not_produced;
SELECT pg_temp.reg('SELECT id, id FROM todos WHERE list_id = $1') AS column_twice;
-- tables: unsynced, not materialized, declared but not read, read but not declared
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', tbls => ARRAY['todos', 'nope']) AS unsynced;
SELECT pg_temp.reg('SELECT id FROM secrets WHERE owner = $1', tbls => ARRAY['secrets'],
  cov => '[{"table": "secrets", "variable": "owner", "param": "l"}]') AS not_materialized;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', tbls => ARRAY['todos', 'tags'],
  mode => 'privileged', cov => '[]', auth => 'public.is_admin(text,text,jsonb)') AS declared_not_read;
SELECT pg_temp.reg('SELECT t.id FROM todos t JOIN tags g ON g.id = t.id WHERE list_id = $1') AS read_not_declared;
-- coverage: empty, duplicate, extra table, extra variable, incomplete, bad param
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', cov => '[]') AS empty_coverage;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1',
  cov => '[{"table": "todos", "variable": "list_id", "param": "l"}, {"table": "todos", "variable": "list_id", "param": "l"}]') AS duplicate_coverage;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1',
  cov => '[{"table": "todos", "variable": "list_id", "param": "l"}, {"table": "tags", "variable": "org", "param": "l"}]') AS extra_table;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1',
  cov => '[{"table": "todos", "variable": "list_id", "param": "l"}, {"table": "todos", "variable": "owner", "param": "l"}]') AS extra_variable;
SELECT pg_temp.reg('SELECT t.id FROM todos t, tags g WHERE t.list_id = $1 AND g.id = t.id',
  tbls => ARRAY['todos', 'tags']) AS incomplete_coverage;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1',
  cov => '[{"table": "todos", "variable": "list_id", "param": "other"}]') AS unknown_param;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1::text', params => '[{"name": "l", "type": "boolean"}]') AS boolean_coverage_param;
-- mode and authorize
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', mode => 'open') AS bad_mode;
SELECT pg_temp.reg('SELECT id FROM todos', params => '[]', cov => '[]', mode => 'privileged') AS privileged_without_authorize;
SELECT pg_temp.reg('SELECT id FROM todos', params => '[]', cov => '[]', mode => 'privileged',
  auth => 'public.resolve(text,text,text)') AS authorize_signature;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', auth => 'public.is_admin(text,text,jsonb)') AS scoped_with_authorize;
-- maxRows
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', mr => 0) AS max_rows_0;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1', mr => 10001) AS max_rows_10001;
-- SQL PostgreSQL refuses, named, with its error
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1 AND nosuch = 1') AS undefined_column;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1 AND id GLOB ''x*''') AS sqlite_only_syntax;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1; SELECT 1') AS two_statements;
SELECT pg_temp.reg('DELETE FROM todos WHERE list_id = $1 RETURNING id') AS not_select;
SELECT pg_temp.reg('WITH d AS (DELETE FROM todos WHERE list_id = $1 RETURNING id) SELECT id FROM d') AS modifying_cte;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1 FOR UPDATE') AS row_locks;
-- partition escapes are refused at registration
SELECT pg_temp.reg('SELECT id FROM public.todos WHERE list_id = $1') AS schema_qualified;
SELECT pg_temp.reg('SELECT _sync_row_id AS id FROM todos WHERE list_id = $1') AS hidden_column;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1 UNION ALL SELECT client_id FROM syncular.sync_commits') AS catalog_table;
SELECT pg_temp.reg('WITH todos AS (SELECT * FROM todos) SELECT id FROM todos WHERE list_id = $1') AS cte_shadowing;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1 AND EXISTS (SELECT 1 FROM pg_class)') AS other_relation;
SELECT pg_temp.reg('SELECT id FROM todos WHERE list_id = $1 UNION SELECT x::text FROM generate_series(1, 2) x(x)') AS srf;
-- a query with quoted names and a CTE over the app table is fine
SELECT pg_temp.reg('WITH mine AS (SELECT * FROM "todos" WHERE list_id = $1) SELECT m.id FROM mine m') AS quoted_and_cte;
SELECT bound_sql FROM syncular.sync_operation_queries WHERE operation_id = 'q';

-- commands
CREATE FUNCTION public.cmd_add(actor text, part text, params jsonb) RETURNS jsonb
LANGUAGE sql AS $$ SELECT '[]'::jsonb $$;
SELECT syncular.register_command('addTodo', 'public.is_admin(text,text,jsonb)', 'public.cmd_add(text,text,jsonb)');
SELECT syncular.register_command('addTodo', 'public.is_admin(text,text,jsonb)', 'public.cmd_add(text,text,jsonb)') ->> 'action' AS again;
SELECT pg_temp.try($$SELECT syncular.register_command('addTodo', 'public.is_admin(text,text,jsonb)', 'public.is_admin(text,text,jsonb)')$$) ->> 'message' AS bad_command;
SELECT pg_temp.try($$SELECT syncular.register_command('todosInList', 'public.is_admin(text,text,jsonb)', 'public.cmd_add(text,text,jsonb)')$$) ->> 'message' AS id_taken;
SELECT pg_temp.try($$SELECT syncular.register_command('', 'public.is_admin(text,text,jsonb)', 'public.cmd_add(text,text,jsonb)')$$) ->> 'message' AS empty_id;

-- the queries IR (queryIrVersion 3): :name placeholders, coverage from reactive.dependencies
SELECT syncular.register_queries('{"queryIrVersion": 3, "queries": [
  {"name": "todosByTitle", "sql": "select id, title from todos where list_id = :listId and (title = :title or :title is null) order by id",
   "positionalSql": "select id, title from todos where list_id = ? and (title = ? or ? is null) order by id",
   "params": [{"name": "listId", "langName": "listId", "type": "string"}, {"name": "title", "langName": "title", "type": "string"}],
   "columns": [{"name": "id", "langName": "id", "type": "string", "nullable": false, "fidelity": "exact"},
               {"name": "title", "langName": "title", "type": "string", "nullable": true, "fidelity": "exact"}],
   "tables": ["todos"],
   "reactive": {"dependencies": [{"table": "todos", "scopes": [{"variable": "list_id", "pattern": "list:{list_id}", "params": ["listId"]}]}],
                "coverage": []}},
  {"name": "tagCount", "positionalSql": "select count(*) as n from tags where label <> ?",
   "params": [{"name": "not", "type": "string"}], "columns": [{"name": "n", "type": "integer", "nullable": false}],
   "tables": ["tags"], "reactive": {"dependencies": [{"table": "tags", "scopes": []}], "coverage": []}}]}',
  max_rows => 50, privileged => '{"tagCount": "public.is_admin(text,text,jsonb)"}');
SELECT operation_id, sql, mode, coverage, max_rows FROM syncular.sync_operation_queries
 WHERE operation_id IN ('todosByTitle', 'tagCount') ORDER BY 1;
-- again: unchanged
SELECT jsonb_path_query_array(syncular.register_queries('{"queryIrVersion": 3, "queries": [
  {"name": "tagCount", "positionalSql": "select count(*) as n from tags where label <> ?",
   "params": [{"name": "not", "type": "string"}], "columns": [{"name": "n", "type": "integer", "nullable": false}],
   "tables": ["tags"], "reactive": {"dependencies": []}}]}', 50, '{"tagCount": "public.is_admin(text,text,jsonb)"}'), '$.queries[*].action') AS again;
-- IR refusals: version, an undeclared placeholder, no coverage proof (all or nothing)
SELECT pg_temp.try($$SELECT syncular.register_queries('{"queryIrVersion": 2, "queries": []}')$$) ->> 'message' AS ir_version;
SELECT pg_temp.try($$SELECT syncular.register_queries('{"queryIrVersion": 3, "queries": [{"name": "bad", "sql": "select id from todos where list_id = :nope",
  "params": [], "columns": [{"name": "id", "type": "string"}], "tables": ["todos"]}]}')$$) ->> 'message' AS undeclared_placeholder;
SELECT pg_temp.try($$SELECT syncular.register_queries('{"queryIrVersion": 3, "queries": [
  {"name": "fine", "sql": "select id from todos where list_id = :l", "params": [{"name": "l", "type": "string"}],
   "columns": [{"name": "id", "type": "string"}], "tables": ["todos"],
   "reactive": {"dependencies": [{"table": "todos", "scopes": [{"variable": "list_id", "params": ["l"]}]}]}},
  {"name": "unproven", "sql": "select id from todos where list_id = :l", "params": [{"name": "l", "type": "string"}],
   "columns": [{"name": "id", "type": "string"}], "tables": ["todos"], "reactive": {"dependencies": []}}]}')$$) ->> 'message' AS no_proof;
SELECT count(*) AS fine_not_stored FROM syncular.sync_operation_queries WHERE operation_id = 'fine';
SELECT syncular._operation_positional('select '':x'' as "a?", x::text, :b, -- :c ?
 :a /* ? */ from t', ARRAY['a', 'b']) AS placeholders;

-- the registrations go with the schema
SELECT (SELECT count(*) FROM syncular.sync_operation_queries) AS queries,
       (SELECT count(*) FROM syncular.sync_operation_commands) AS commands;
SELECT syncular.unregister_schema('public', true) ->> 'appSchema' AS unregistered;
SELECT (SELECT count(*) FROM syncular.sync_operation_queries) AS queries,
       (SELECT count(*) FROM syncular.sync_operation_commands) AS commands;

\i sql/operations_done.psql
