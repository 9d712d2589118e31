-- cluster_call: the shard side of the router's cluster-wide calls (80_cluster.sql,
-- docs/scaling.md).  The check round (apply false) runs the call and rolls it back: it answers
-- and raises exactly as the call would, and leaves nothing behind; the apply round is the call.
-- Works in a private database.
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_cluster;
\c syncular_t_cluster
\i sql/test_helpers.psql
\set VERBOSITY terse
\set v1 '{"version": 1, "tables": [{"name": "todos", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}], "scopes": ["list:{list_id}"]}]}'
\set v2 '{"version": 2, "tables": [{"name": "todos", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "notes", "type": "string", "nullable": true}], "scopes": ["list:{list_id}"]}]}'

-- check round on an empty database: the answer of a first registration, nothing registered
SELECT syncular.cluster_call('ensure_schema', jsonb_build_object('ir', :'v1'::jsonb), false) AS checked;
SELECT count(*) AS settings_rows FROM syncular.sync_settings WHERE compiled IS NOT NULL;
SELECT to_regclass('public.todos') AS todos_table;
SELECT syncular.readiness() ->> 'phase' AS phase;
-- apply round: registered, in public (no caller schema crosses the router)
SELECT syncular.cluster_call('ensure_schema', jsonb_build_object('ir', :'v1'::jsonb)) AS applied;
SELECT to_regclass('public.todos') AS todos_table, syncular.readiness() ->> 'ready' AS ready;

-- a checked bump does its DDL and rolls it back: still version 1, no column notes
SELECT syncular.cluster_call('ensure_schema', jsonb_build_object('ir', :'v2'::jsonb), false) ->> 'action' AS checked_bump;
SELECT schema_version FROM syncular.sync_schema_meta;
SELECT count(*) AS notes_columns FROM pg_attribute WHERE attrelid = 'public.todos'::regclass AND attname = 'notes';

-- checkpoint declarations tagged by the router with a shard database: installed only on that
-- shard (applied: the bump to v2 with two declarations, one for this database, one for another)
SELECT syncular.cluster_call('ensure_schema', jsonb_build_object('ir', :'v2'::jsonb, 'checkpoints',
  jsonb_build_array(
    '{"partition": "elsewhere", "name": "cp", "schemaVersion": 2, "shardDatabase": "syncular_t_other"}'::jsonb,
    jsonb_build_object('partition', 'here', 'name', 'cp', 'schemaVersion', 2, 'shardDatabase', current_database()))))
  ->> 'action' AS bump;
SELECT partition, name, state FROM syncular.sync_backfill_checkpoints ORDER BY 1;
SELECT partition, required_writer_version FROM syncular.sync_writer_fence ORDER BY 1;

-- refusals come out of the check round unchanged (SQLSTATE, message, catalogue DETAIL)
SELECT pg_temp.try($$SELECT syncular.cluster_call('ensure_schema', jsonb_build_object('ir', '{"version": 0, "tables": []}'::jsonb), false)$$);
SELECT pg_temp.err($$SELECT syncular.cluster_call('set_scope_resolver', '{"fn": "public.nope(text,text,text)"}', false)$$);
SELECT pg_temp.try($$SELECT syncular.cluster_call('drop_everything', '{}', false)$$);
SELECT pg_temp.try($$SELECT syncular.cluster_call('set_scope_resolver', '[]', true)$$);

-- hooks: the check round registers nothing, the apply round registers
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["*"]}'::jsonb $$;
SELECT syncular.cluster_call('set_scope_resolver', '{"fn": "public.resolve(text,text,text)"}', false) AS checked;
SELECT scope_resolver FROM syncular.sync_settings;
SELECT syncular.cluster_call('set_scope_resolver', '{"fn": "public.resolve(text,text,text)"}') AS applied;
SELECT scope_resolver FROM syncular.sync_settings;
SELECT syncular.cluster_call('set_scope_resolver', '{"fn": null}') AS unregistered;
SELECT scope_resolver FROM syncular.sync_settings;

\c :orig_db
DROP DATABASE syncular_t_cluster;
