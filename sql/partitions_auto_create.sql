-- partitions_auto_create: syncular.auto_create_partitions (default on) decides whether a round
-- or push for a partition this database has never seen creates it.  Off: a mistyped partition
-- is refused with sync.storage.partition_unregistered (42704, details {partition}, a HINT) and
-- nothing is written (no registry row); handle_http answers it as 500 sync.internal_error (a
-- host storage code never travels on the wire) and logs the reason.  Known partitions are
-- served as before.  Works in a private database.
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS syncular_t_partitions_auto;
CREATE DATABASE syncular_t_partitions_auto;
\c syncular_t_partitions_auto
SET client_min_messages = warning;
CREATE EXTENSION syncular;
SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false}]}]}') ->> 'action' AS action;
CREATE FUNCTION public.resolver(actor text, part text, client text) RETURNS jsonb
  LANGUAGE sql STABLE AS $$ SELECT '{"list_id": ["*"]}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.resolver(text,text,text)');
SHOW syncular.auto_create_partitions;

-- on (default): the first push creates tenant-1
SELECT syncular.push('tenant-1', 'u1', 'c1', '[{"clientCommitId": "k1", "operations": [
  {"table": "todos", "op": "upsert", "row": {"id": "t1", "list_id": "l1"}}]}]') -> 0 ->> 'status' AS status;

SET syncular.auto_create_partitions = off;
-- a known partition is served
SELECT syncular.push('tenant-1', 'u1', 'c1', '[{"clientCommitId": "k2", "operations": [
  {"table": "todos", "op": "upsert", "row": {"id": "t2", "list_id": "l1"}}]}]') -> 0 ->> 'status' AS status;
-- a mistyped one is refused, by every entry
SELECT syncular.push('tenant-l', 'u1', 'c1', '[{"clientCommitId": "k3", "operations": [
  {"table": "todos", "op": "upsert", "row": {"id": "t3", "list_id": "l1"}}]}]');
SELECT syncular.pull('tenant-l', 'u1', 'c1', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}}]');
SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [
  {"type": "REQ_HEADER", "clientId": "phone-1", "schemaVersion": 1},
  {"type": "PULL_HEADER", "limitCommits": 100, "limitSnapshotRows": 1000, "maxSnapshotPages": 1, "accept": 1},
  {"type": "SUBSCRIPTION", "id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": -1}]}') AS request \gset
SELECT syncular.handle(:'request'::bytea, 'tenant-l', 'u1');
SELECT status, convert_from(body, 'UTF8')::jsonb ->> 'code' AS code
  FROM syncular.handle_http(:'request'::bytea, 'tenant-l', 'u1');
SELECT count(*) AS partitions FROM syncular.sync_partition_registry;

-- on again: created
RESET syncular.auto_create_partitions;
SELECT status FROM syncular.handle_http(:'request'::bytea, 'tenant-l', 'u1');
SELECT partition FROM syncular.sync_partition_registry ORDER BY 1;

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE syncular_t_partitions_auto;
