-- The schema of the SQL-write benchmarks (bench/sql_writes.sh, bench/sql-write-instructions.sh):
-- the synced table `items` (scope list_id) and the plain baseline `items_plain` with the same
-- columns (the partition and the app columns) and the same key.
SET client_min_messages = warning;
CREATE EXTENSION syncular;
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "items", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true},
    {"name": "qty", "type": "integer", "nullable": true},
    {"name": "done", "type": "boolean", "nullable": true}]}]}', '[]', 'public');
CREATE FUNCTION public.allow_all(text, text, text) RETURNS jsonb
  LANGUAGE sql AS $$ SELECT '{"list_id": ["*"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.allow_all(text,text,text)');
CREATE TABLE public.items_plain (partition text NOT NULL, id text NOT NULL, list_id text NOT NULL,
  title text, qty bigint, done boolean, PRIMARY KEY (partition, id));
