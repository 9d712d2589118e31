-- unregister: syncular.unregister_schema() undoes a registration without dropping the extension
-- (what it empties, what it keeps, its guard), the errhints of a refused second ensure_schema,
-- and what DROP EXTENSION syncular keeps.  Works in a private database.
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
CREATE DATABASE syncular_t_unregister;
\c syncular_t_unregister
\i sql/test_helpers.psql
\set VERBOSITY terse

-- '<SQLSTATE> <message> | <code> <details> | HINT: <hint>' of the error q raises, or 'ok: <value>'
CREATE FUNCTION pg_temp.hinted(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; h text; r text;
BEGIN
  EXECUTE q INTO r;
  RETURN 'ok: ' || coalesce(r, '<null>');
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          h = PG_EXCEPTION_HINT;
  RETURN st || ' ' || msg || ' | ' || (det::jsonb ->> 'code') || ' ' || (det::jsonb -> 'details')::text
         || ' | HINT: ' || coalesce(nullif(h, ''), '<none>');
END
$$;
-- rows in every catalog table (what a fresh install has: none)
CREATE FUNCTION pg_temp.catalog_rows() RETURNS text LANGUAGE plpgsql AS $$
DECLARE t text; n bigint; out text := '';
BEGIN
  FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
            WHERE s.nspname = 'syncular' AND c.relkind = 'r'
              AND c.relname <> 'sync_segment_secret'  -- the server key, created with the extension
            ORDER BY c.relname LOOP
    EXECUTE format('SELECT count(*) FROM syncular.%I', t) INTO n;
    IF n > 0 THEN
      out := out || format('%s=%s ', t, n);
    END IF;
  END LOOP;
  RETURN coalesce(nullif(rtrim(out), ''), 'empty');
END
$$;
\set ir1 '{"version": 1, "tables": [{"name": "todos", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "title", "type": "string", "nullable": true}], "scopes": ["list:{list_id}"]}]}'
\set ir1_changed '{"version": 1, "tables": [{"name": "todos", "primaryKey": "id", "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "list_id", "type": "string", "nullable": false}, {"name": "title", "type": "integer", "nullable": true}], "scopes": ["list:{list_id}"]}]}'

-- nothing registered yet
SELECT pg_temp.hinted($$SELECT syncular.unregister_schema('app')$$);

-- a registration with hooks, commits, a client and a tombstone
CREATE SCHEMA app;
CREATE SCHEMA other;
SELECT syncular.ensure_schema(:'ir1', '[]', 'app') ->> 'action' AS action;
CREATE FUNCTION app.allowed(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["*"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('app.allowed(text,text,text)');
CREATE FUNCTION app.validate(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb,
                             actor_id text, partition text) RETURNS void
  LANGUAGE sql AS $$ SELECT $$;
SELECT syncular.set_row_validator('todos', 'app.validate(text,text,text,jsonb,jsonb,text,text)');
SELECT r ->> 'status' AS status FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[
  {"clientCommitId": "a", "operations": [{"table": "todos", "op": "upsert", "row": {"id": "t1", "list_id": "l1", "title": "one"}},
                                         {"table": "todos", "op": "upsert", "row": {"id": "t2", "list_id": "l1", "title": "two"}}]},
  {"clientCommitId": "b", "operations": [{"table": "todos", "op": "delete", "rowId": "t2"}]}]')) r;
SELECT log_epoch AS old_epoch FROM syncular.sync_partition_registry WHERE partition = 'p1' \gset
SELECT pg_temp.catalog_rows();

-- a second, different ensure_schema is refused, and the hint says what to do
SELECT pg_temp.hinted($$SELECT syncular.ensure_schema('$$ || :'ir1' || $$', '[]', 'other')$$);
SELECT pg_temp.hinted($$SELECT syncular.ensure_schema('$$ || :'ir1_changed' || $$', '[]', 'app')$$);
SELECT pg_temp.hinted($$SELECT syncular.ensure_schema('{"version": 0, "tables": []}', '[]', 'app')$$);
SELECT pg_temp.hinted($$SELECT syncular.ensure_schema('$$ || replace(:'ir1_changed', '"version": 1', '"version": 2') || $$', '[]', 'app')$$);

-- the guard: the caller names the registered schema
SELECT pg_temp.hinted($$SELECT syncular.unregister_schema('other')$$);
SELECT pg_temp.hinted($$SELECT syncular.unregister_schema(NULL)$$);

-- a ROLLBACK undoes it
BEGIN;
SELECT syncular.unregister_schema('app', drop_tables => true);
ROLLBACK;
SELECT pg_temp.catalog_rows();
SELECT id, title FROM app.todos ORDER BY id;

-- unregister, keeping the tables: every catalog table is empty, the table, the app schema and
-- the hook functions stay
SELECT syncular.unregister_schema('app');
SELECT pg_temp.catalog_rows();
SELECT id, list_id, title, _sync_server_version FROM app.todos ORDER BY id;
SELECT p.oid::regprocedure AS hook_functions_kept FROM pg_proc p
 WHERE p.pronamespace = 'app'::regnamespace ORDER BY 1;
SELECT syncular.readiness() ->> 'ready' AS ready, syncular.readiness() ->> 'phase' AS phase;
-- the kept table blocks a new registration of the same name, with a hint
SELECT pg_temp.hinted($$SELECT syncular.ensure_schema('$$ || :'ir1_changed' || $$', '[]', 'app') ->> 'action'$$);
DROP TABLE app.todos;
-- registered afresh, with a changed layout at version 1, now in the other schema too is fine
SELECT syncular.ensure_schema(:'ir1_changed', '[]', 'other') ->> 'action' AS action;
SELECT syncular.unregister_schema('other', drop_tables => true) - 'appSchema' AS result;
SELECT to_regclass('other.todos') AS dropped;
SELECT syncular.ensure_schema(:'ir1', '[]', 'app') ->> 'action' AS action;

-- a returning client of the old partition state gets a new log epoch and resets
SELECT syncular.set_scope_resolver('app.allowed(text,text,text)');
SELECT syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
  'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'c1', 'schemaVersion', 1, 'logEpoch', :'old_epoch'),
    jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', 0,
                       'maxSnapshotPages', 0, 'accept', 1)))), 'p1', 'u1')) -> 'frames' -> 0 ->> 'resetRequired' AS reset;

-- the partition's log starts again at commit_seq 1, although this session numbered commits 1
-- and 2 of the old log (the backend's lower bound for its next read is above the new log:
-- src/storage_partition.c reads again without it); a commit rolled back gives its number to the
-- next one, although this session read the rolled-back commits as the log's newest
SELECT r ->> 'status' AS status, r ->> 'commitSeq' AS seq FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[
  {"clientCommitId": "n1", "operations": [{"table": "todos", "op": "upsert", "row": {"id": "t1", "list_id": "l1", "title": "new"}}]}]')) r;
BEGIN;
SELECT r ->> 'commitSeq' AS seq_rolled_back FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[
  {"clientCommitId": "n2", "operations": [{"table": "todos", "op": "upsert", "row": {"id": "t2", "list_id": "l1", "title": "gone"}}]},
  {"clientCommitId": "n2b", "operations": [{"table": "todos", "op": "upsert", "row": {"id": "t4", "list_id": "l1", "title": "gone"}}]}]')) r;
ROLLBACK;
SELECT r ->> 'status' AS status, r ->> 'commitSeq' AS seq FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1', '[
  {"clientCommitId": "n3", "operations": [{"table": "todos", "op": "upsert", "row": {"id": "t3", "list_id": "l1", "title": "next"}}]}]')) r;
SELECT commit_seq, client_commit_id FROM syncular.sync_commits ORDER BY 1;

-- owner-only
SELECT has_function_privilege('public', 'syncular.unregister_schema(text, boolean)', 'EXECUTE') AS public_may_execute;

-- DROP EXTENSION syncular: the catalog goes (every table, view and function in schema syncular,
-- with the log, idempotency records and epochs); the app schema, its synced tables (data and
-- _sync_* columns: created by ensure_schema, not members of the extension) and the hook
-- functions stay
-- CASCADE: the capture triggers of the kept synced tables depend on the extension's functions
DROP EXTENSION syncular CASCADE;
-- (the schema named in syncular.control is created by CREATE EXTENSION but is not a member of
-- the extension: it stays, empty)
SELECT nspname FROM pg_namespace WHERE nspname IN ('syncular', 'app') ORDER BY 1;
SELECT (SELECT count(*) FROM pg_class WHERE relnamespace = 'syncular'::regnamespace)
     + (SELECT count(*) FROM pg_proc WHERE pronamespace = 'syncular'::regnamespace)
     + (SELECT count(*) FROM pg_type WHERE typnamespace = 'syncular'::regnamespace) AS objects_left_in_syncular;
SELECT string_agg(attname, ', ' ORDER BY attnum) AS kept_columns FROM pg_attribute
 WHERE attrelid = 'app.todos'::regclass AND attnum > 0 AND NOT attisdropped;
SELECT count(*) AS hook_functions_kept FROM pg_proc WHERE pronamespace = 'app'::regnamespace;

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE syncular_t_unregister;
