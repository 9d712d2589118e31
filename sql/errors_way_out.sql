-- errors_way_out: what psql shows, at its default verbosity, for the errors a newcomer meets
-- first; each names its cause and the way out (HINT), and none drags the extension's internal
-- PL/pgSQL frames along as CONTEXT lines.
--   * a round (handle, handle_http) before any schema is registered: sync.schema_not_ready with
--     the cause and "Call syncular.ensure_schema first." (HTTP stays 503, retryable, with the
--     cause in its message and details);
--   * ensure_schema with an unknown column type (raised from PL/pgSQL): the valid types, no
--     CONTEXT;
--   * a subscription naming an unknown table: sync.unknown_table with the table in its details;
--   * a scope resolver that raises with a HINT of its own: the WARNING keeps that HINT.
-- Works in a private database.
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_errors_way_out;
CREATE DATABASE syncular_t_errors_way_out;
\c syncular_t_errors_way_out
SET client_min_messages = warning;
CREATE EXTENSION syncular;

SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [
  {"type": "REQ_HEADER", "clientId": "phone-1", "schemaVersion": 1},
  {"type": "PULL_HEADER", "limitCommits": 100, "limitSnapshotRows": 1000, "maxSnapshotPages": 1, "accept": 1},
  {"type": "SUBSCRIPTION", "id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": -1}]}') AS request \gset

-- no schema registered yet
SELECT syncular.handle(:'request'::bytea, 'tenant-1', 'user-42');
SELECT status, convert_from(body, 'UTF8')::jsonb AS body
  FROM syncular.handle_http(:'request'::bytea, 'tenant-1', 'user-42');

-- an unknown column type, raised from PL/pgSQL: the valid types in the HINT, no CONTEXT
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "text", "nullable": false}]}]}');

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false}]}]}') ->> 'action' AS action;

-- a subscription to a table that is not served: the table is named
SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [
  {"type": "REQ_HEADER", "clientId": "phone-1", "schemaVersion": 1, "logEpoch": "e"},
  {"type": "PULL_HEADER", "limitCommits": 100, "limitSnapshotRows": 1000, "maxSnapshotPages": 1, "accept": 1},
  {"type": "SUBSCRIPTION", "id": "s1", "table": "todo", "scopes": {"list_id": ["l1"]}, "cursor": -1}]}') AS typo \gset
SELECT syncular.debug_render(syncular.handle(:'request'::bytea, 'tenant-1', 'user-42')) -> 'frames' -> 0 ->> 'logEpoch' IS NOT NULL AS first_round_answers_epoch;
SELECT log_epoch AS epoch FROM syncular.sync_partition_registry WHERE partition = 'tenant-1' \gset
SELECT syncular.handle(syncular.debug_encode(jsonb_set(syncular.debug_render(:'typo'::bytea),
         '{frames,0,logEpoch}', to_jsonb(:'epoch'::text))), 'tenant-1', 'user-42');

-- a resolver that raises with its own HINT: the WARNING keeps it, before the extension's
CREATE FUNCTION public.resolver(actor text, part text, client text) RETURNS jsonb
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RAISE EXCEPTION 'grant service unreachable' USING HINT = 'Start the grant service (grantd).';
END $$;
SELECT syncular.set_scope_resolver('public.resolver(text,text,text)');
SET client_min_messages = warning;
SELECT syncular.pull('tenant-1', 'user-42', 'phone-1',
         '[{"id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}}]') -> 0 ->> 'status' AS status;

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE syncular_t_errors_way_out;
