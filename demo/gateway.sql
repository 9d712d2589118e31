-- Demo part 5 (schema): the database behind syncular-gateway.  The same todos IR and scope rule
-- as part 1; request builders the Python clients call (the SDKs encode these bytes themselves).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION syncular;
SELECT syncular.ensure_schema(:'ir'::jsonb) ->> 'action' AS "ensure_schema(todos)";
CREATE FUNCTION public.allowed_scopes(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT CASE actor WHEN 'alice' THEN '{"list_id": ["groceries", "chores"]}'::jsonb
                    WHEN 'bob'   THEN '{"list_id": ["groceries"]}'::jsonb
                    ELSE '{}'::jsonb END
$$;
SELECT 'scope resolver registered' AS hooks FROM (SELECT syncular.set_scope_resolver('public.allowed_scopes(text,text,text)')) r;

CREATE SCHEMA demo_gw;
-- a request: REQ_HEADER (with the partition's epoch once it exists) + frames, wire 3
CREATE FUNCTION demo_gw.req(client text, frames jsonb) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  hdr jsonb := jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1);
  ep text;
BEGIN
  SELECT r.log_epoch INTO ep FROM syncular.sync_partition_registry r WHERE r.partition = 'demo';
  IF ep IS NOT NULL THEN hdr := hdr || jsonb_build_object('logEpoch', ep); END IF;
  RETURN syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
                                                  'frames', jsonb_build_array(hdr) || frames));
END $$;
CREATE FUNCTION demo_gw.pull(client text, cur bigint DEFAULT -1) RETURNS bytea LANGUAGE sql AS $$
  SELECT demo_gw.req(client, jsonb_build_array(
    jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 100, 'limitSnapshotRows', 100,
                       'maxSnapshotPages', 1, 'accept', 1),
    jsonb_build_object('type', 'SUBSCRIPTION', 'id', 'todos-groceries', 'table', 'todos',
                       'scopes', '{"list_id": ["groceries"]}'::jsonb, 'cursor', cur)))
$$;
CREATE FUNCTION demo_gw.push(client text, commit_id text, r jsonb) RETURNS bytea LANGUAGE sql AS $$
  SELECT demo_gw.req(client, jsonb_build_array(jsonb_build_object('type', 'PUSH_COMMIT',
    'clientCommitId', commit_id, 'operations', jsonb_build_array(jsonb_build_object(
      'table', 'todos', 'rowId', r ->> 'id', 'op', 'upsert',
      'payload', encode(syncular.encode_sparse_row('todos', r), 'base64'))))))
$$;
