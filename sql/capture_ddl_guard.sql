-- capture_ddl_guard: DDL on a synced table outside ensure_schema is refused by the extension's
-- event triggers (src/ddl_guard.c, src/sql/33_ddl_guard.sql): every layout change of a synced
-- table (columns, name, schema, the capture triggers, DROP directly or by cascade) fails with
-- sync.storage.physical_layout_mismatch {reason: ddl_outside_ensure_schema} and a HINT, and
-- leaves the table as it was; other DDL on it and any DDL on other tables passes, also for a role
-- without privileges on syncular.*; ensure_schema's bump and unregister_schema pass, the flag of
-- the bump ends with it (and with a rolled-back savepoint); the superuser escape hatch
-- syncular.allow_synced_table_ddl lets a repair through and no other role can set it.
\set testdb syncular_t_capture_ddl_guard
\i sql/capture_helpers.psql
SET syncular.partition = 'p1';
INSERT INTO app.todos (id, list_id, title) VALUES ('t1', 'l1', 'one');

-- the event triggers came with CREATE EXTENSION, as members of the extension
SELECT e.evtname, e.evtevent, e.evttags, e.evtfoid::regprocedure AS fn,
       d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'syncular') AS member
  FROM pg_event_trigger e JOIN pg_depend d ON d.classid = 'pg_event_trigger'::regclass AND d.objid = e.oid
                                          AND d.deptype = 'e'
 ORDER BY 1;

-- err(statement): "SQLSTATE DETAIL" of the error it raises, or "ok"
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; det text;
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || det;
END $$;
-- the layout of app.todos: columns, triggers (enabled), name and schema
CREATE FUNCTION pg_temp.layout() RETURNS text LANGUAGE sql AS $$
  SELECT (SELECT string_agg(attname || ':' || format_type(atttypid, atttypmod) || CASE WHEN attnotnull THEN '!' ELSE '' END,
                            ' ' ORDER BY attnum)
            FROM pg_attribute WHERE attrelid = 'app.todos'::regclass AND attnum > 0 AND NOT attisdropped)
         || ' | ' || (SELECT string_agg(tgname || ':' || tgenabled::text, ' ' ORDER BY tgname)
                        FROM pg_trigger WHERE tgrelid = 'app.todos'::regclass AND NOT tgisinternal)
$$;
SELECT pg_temp.layout() AS before \gset

-- one refusal in full: code, SQLSTATE (55000), DETAIL and HINT
\set VERBOSITY default
ALTER TABLE app.todos ADD COLUMN extra text;
\set VERBOSITY terse

-- every layout change of a synced table is refused, and changes nothing
SELECT q, pg_temp.err(q) AS refused
  FROM unnest(ARRAY[
    'ALTER TABLE app.todos ADD COLUMN extra text',
    'ALTER TABLE app.todos ALTER COLUMN title SET DEFAULT ''x'', ADD COLUMN extra text',
    'ALTER TABLE app.todos DROP COLUMN n',
    'ALTER TABLE app.todos DROP COLUMN _sync_scopes',
    'ALTER TABLE app.todos ALTER COLUMN n TYPE numeric',
    'ALTER TABLE app.todos ALTER COLUMN title SET NOT NULL',
    'ALTER TABLE app.todos ALTER COLUMN list_id DROP NOT NULL',
    'ALTER TABLE app.todos RENAME COLUMN title TO heading',
    'ALTER TABLE app.todos RENAME TO tasks',
    'ALTER TABLE IF EXISTS app.todos RENAME TO tasks',
    'ALTER TABLE app.todos SET SCHEMA public',
    'ALTER TABLE app.todos DISABLE TRIGGER ALL',
    'ALTER TABLE app.todos DISABLE TRIGGER USER',
    'ALTER TABLE app.todos DISABLE TRIGGER syncular_capture_insert',
    'ALTER TRIGGER zz_syncular_capture ON app.todos RENAME TO capture',
    'DROP TRIGGER syncular_capture_delete ON app.todos',
    'DROP TABLE app.todos',
    'DROP TABLE app.notes, app.todos',
    'DROP SCHEMA app CASCADE']) q;
SELECT pg_temp.layout() = :'before' AS layout_unchanged, count(*) AS rows FROM app.todos;
-- unqualified names resolve with the session's search_path, as the command itself does
SET search_path = app, public;
SELECT pg_temp.err('ALTER TABLE todos DROP COLUMN title') AS unqualified;
RESET search_path;

-- other DDL on a synced table, and any DDL on other tables, passes
CREATE TABLE public.plain (id int);
CREATE FUNCTION public.touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER app_touch BEFORE INSERT ON app.todos FOR EACH ROW EXECUTE FUNCTION public.touch();
SELECT q, pg_temp.err(q) AS result
  FROM unnest(ARRAY[
    'ALTER TABLE app.todos ADD CONSTRAINT title_len CHECK (length(title) < 100)',
    'ALTER TABLE app.todos ALTER COLUMN title SET DEFAULT ''untitled''',
    'ALTER TABLE app.todos ALTER COLUMN title SET STATISTICS 200',
    'ALTER TABLE app.todos SET (fillfactor = 90)',
    'ALTER TABLE app.todos DISABLE TRIGGER app_touch',
    'ALTER TABLE app.todos ENABLE TRIGGER ALL',
    'ALTER TRIGGER app_touch ON app.todos RENAME TO app_touch2',
    'DROP TRIGGER app_touch2 ON app.todos',
    'CREATE INDEX todos_title ON app.todos (title)',
    'ALTER TABLE public.plain ADD COLUMN v text',
    'ALTER TABLE public.plain RENAME COLUMN v TO w',
    'ALTER TABLE public.plain RENAME TO plain2',
    'DROP TABLE public.plain2']) q;
INSERT INTO app.todos (id, list_id) VALUES ('t2', 'l1');
SELECT id, title FROM app.todos ORDER BY id;

-- a role without any privilege on syncular.* runs DDL on its own tables (the guard reads the
-- registration as the extension owner), and is refused on a synced table it owns
CREATE ROLE syncular_ddl_role;
GRANT CREATE, USAGE ON SCHEMA public TO syncular_ddl_role;
SET ROLE syncular_ddl_role;
CREATE TABLE public.own (id int);
ALTER TABLE public.own ADD COLUMN v text;
DROP TABLE public.own;
RESET ROLE;
ALTER TABLE app.notes OWNER TO syncular_ddl_role;
GRANT USAGE ON SCHEMA app TO syncular_ddl_role;
SET ROLE syncular_ddl_role;
SELECT pg_temp.err('ALTER TABLE app.notes ADD COLUMN v text') AS owner_adds_column;
SELECT pg_temp.err('DROP TABLE app.notes') AS owner_drops;
-- and it cannot open the escape hatch
SET syncular.allow_synced_table_ddl = on;
RESET ROLE;
ALTER TABLE app.notes OWNER TO CURRENT_USER;
REVOKE ALL ON SCHEMA app FROM syncular_ddl_role;
REVOKE ALL ON SCHEMA public FROM syncular_ddl_role;
DROP ROLE syncular_ddl_role;

-- ensure_schema's bump alters and drops synced tables: it passes (v2 appends a column to todos
-- and retires notes) ...
SELECT jsonb_set(jsonb_set(compiled, '{tables}', jsonb_build_array(compiled -> 'tables' -> 0)),
                 '{tables,0,columns}', compiled -> 'tables' -> 0 -> 'columns'
                   || '[{"name": "tag", "type": "string", "nullable": true}]') AS v1_todos
  FROM syncular.sync_settings \gset
SELECT r ->> 'action' AS action, r -> 'altered' AS altered, r -> 'dropped' AS dropped
  FROM syncular.ensure_schema(jsonb_set(:'v1_todos'::jsonb, '{version}', '2'), '[]', 'app') r;
-- ... and the guard is back right after it, in the same transaction
BEGIN;
SELECT syncular.ensure_schema(jsonb_set(jsonb_set(:'v1_todos'::jsonb, '{version}', '3'), '{tables,0,columns}',
         (jsonb_set(:'v1_todos'::jsonb, '{version}', '3') -> 'tables' -> 0 -> 'columns')
           || '[{"name": "tag2", "type": "string", "nullable": true}]'), '[]', 'app') ->> 'action' AS action;
SELECT pg_temp.err('ALTER TABLE app.todos DROP COLUMN tag2') AS after_bump;
ROLLBACK;
-- the internal flag ends with the savepoint that set it
BEGIN;
SAVEPOINT s;
SELECT syncular._synced_ddl(true);
ROLLBACK TO SAVEPOINT s;
SELECT pg_temp.err('ALTER TABLE app.todos DROP COLUMN tag') AS after_savepoint;
ROLLBACK;

-- the superuser escape hatch: a repair goes through; ensure_schema then refuses until the
-- layout is the registered one again
SET syncular.allow_synced_table_ddl = on;
ALTER TABLE app.todos RENAME COLUMN tag TO label;
RESET syncular.allow_synced_table_ddl;
SELECT pg_temp.err(format('SELECT syncular.ensure_schema(%L, ''[]'', ''app'')',
                          jsonb_set(:'v1_todos'::jsonb, '{version}', '2'))) AS ensure_after_repair;
SET syncular.allow_synced_table_ddl = on;
ALTER TABLE app.todos RENAME COLUMN label TO tag;
RESET syncular.allow_synced_table_ddl;
SELECT syncular.ensure_schema(jsonb_set(:'v1_todos'::jsonb, '{version}', '2'), '[]', 'app') ->> 'action' AS action;

-- a table a repair moved out of the app schema is no synced table for the capture, also in a
-- backend that captured writes to it before (its kept entry is checked against the table's schema)
INSERT INTO app.todos (id, list_id, title) VALUES ('t3', 'l1', 'three');
SET syncular.allow_synced_table_ddl = on;
ALTER TABLE app.todos SET SCHEMA public;
SELECT pg_temp.err($$INSERT INTO public.todos (id, list_id, title) VALUES ('t4', 'l1', 'four')$$) AS moved;
ALTER TABLE public.todos SET SCHEMA app;
RESET syncular.allow_synced_table_ddl;
INSERT INTO app.todos (id, list_id, title) VALUES ('t4', 'l1', 'four');
-- the same when the app schema itself is renamed
ALTER SCHEMA app RENAME TO app_renamed;
SELECT pg_temp.err($$INSERT INTO app_renamed.todos (id, list_id, title) VALUES ('t5', 'l1', 'five')$$) AS renamed;
ALTER SCHEMA app_renamed RENAME TO app;
INSERT INTO app.todos (id, list_id, title) VALUES ('t5', 'l1', 'five');

-- unregister_schema may drop its tables (the registration goes first, so they are plain tables)
SELECT syncular.unregister_schema('app', true) -> 'droppedTables' AS dropped;
SELECT to_regclass('app.todos') AS todos;
\i sql/capture_done.psql
