-- Fixture of the gateway end-to-end tests (run.py): an app schema, a scope resolver, an SQL
-- authenticator, and request builders (SSP2 wire 3 via syncular.debug_encode) the test calls
-- through psql.  Loaded into a fresh database.
SET client_min_messages = warning;
CREATE EXTENSION syncular;

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "tasks", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "title", "type": "string", "nullable": true}],
   "scopes": ["list:{list_id}"]},
  {"name": "files", "primaryKey": "id", "columns": [
     {"name": "id", "type": "string", "nullable": false},
     {"name": "list_id", "type": "string", "nullable": false},
     {"name": "att", "type": "blob_ref", "nullable": true}],
   "scopes": ["list:{list_id}"]}]}'::jsonb) ->> 'action';

CREATE SCHEMA gwtest;
-- actors see list l1; "slow" rounds sleep in the resolver (a round in flight for the fault tests);
-- "l2only" sees list l2 only
CREATE FUNCTION gwtest.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  IF actor = 'slow' THEN
    PERFORM pg_sleep(2);
  END IF;
  IF actor = 'l2only' THEN
    RETURN '{"list_id": ["l2"]}';
  END IF;
  RETURN '{"list_id": ["l1", "l2"]}';
END
$$;
SELECT syncular.set_scope_resolver('gwtest.resolve(text,text,text)');

-- SQL authenticator: header x-api-key or query apiKey = "<actor>@<partition>"; "deny" refuses
CREATE FUNCTION gwtest.authenticate(method text, path text, headers jsonb, query jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN k IS NULL OR k NOT LIKE '%@%' OR k LIKE 'deny@%' THEN NULL
              ELSE jsonb_build_object('actorId', split_part(k, '@', 1), 'partition', split_part(k, '@', 2)) END
    FROM (SELECT coalesce(headers ->> 'x-api-key', query ->> 'apiKey') AS k) x
$$;
SELECT syncular.set_authenticator('gwtest.authenticate(text,text,jsonb,jsonb)');

-- req(partition, client, frames): request bytes with the partition's current epoch (if any)
CREATE FUNCTION gwtest.req(part text, client text, frames jsonb) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  hdr jsonb := jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1);
  ep text;
BEGIN
  SELECT r.log_epoch INTO ep FROM syncular.sync_partition_registry r WHERE r.partition = part;
  IF ep IS NOT NULL THEN
    hdr := hdr || jsonb_build_object('logEpoch', ep);
  END IF;
  RETURN syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3,
           'msgKind', 'request', 'frames', jsonb_build_array(hdr) || frames));
END
$$;
-- pull(partition, client, cursor, list): one subscription "s1" to tasks of a list
CREATE FUNCTION gwtest.pull(part text, client text, cur bigint DEFAULT -1, list text DEFAULT 'l1')
RETURNS bytea LANGUAGE sql AS $$
  SELECT gwtest.req(part, client, jsonb_build_array(
    jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 100, 'limitSnapshotRows', 1000,
                       'maxSnapshotPages', 1, 'accept', 1),
    jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's1', 'table', 'tasks',
                       'scopes', jsonb_build_object('list_id', jsonb_build_array(list)), 'cursor', cur)))
$$;
-- push(partition, client, commitId, rowId, title, list): one upsert commit, no pull
CREATE FUNCTION gwtest.push(part text, client text, commit_id text, row_id text, title text,
                            list text DEFAULT 'l1') RETURNS bytea LANGUAGE sql AS $$
  SELECT gwtest.req(part, client, jsonb_build_array(jsonb_build_object(
    'type', 'PUSH_COMMIT', 'clientCommitId', commit_id, 'operations', jsonb_build_array(
      jsonb_build_object('table', 'tasks', 'rowId', row_id, 'op', 'upsert',
        'payload', encode(syncular.encode_sparse_row('tasks',
                   jsonb_build_object('id', row_id, 'list_id', list, 'title', title)), 'base64'))))))
$$;
-- push_file(partition, client, commitId, rowId, blobId, byteLength, list): a files row whose
-- blob_ref names a blob (SPEC §5.9.1 canonical BlobRef)
CREATE FUNCTION gwtest.push_file(part text, client text, commit_id text, row_id text, blob_id text,
                                 len bigint, list text DEFAULT 'l1') RETURNS bytea LANGUAGE sql AS $$
  SELECT gwtest.req(part, client, jsonb_build_array(jsonb_build_object(
    'type', 'PUSH_COMMIT', 'clientCommitId', commit_id, 'operations', jsonb_build_array(
      jsonb_build_object('table', 'files', 'rowId', row_id, 'op', 'upsert',
        'payload', encode(syncular.encode_sparse_row('files',
                   jsonb_build_object('id', row_id, 'list_id', list, 'att',
                     jsonb_build_object('blobId', blob_id, 'byteLength', len))), 'base64'))))))
$$;
