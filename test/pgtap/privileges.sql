-- pgTAP: the privilege model of src/sql/90_grants.sql, exercised by roles.
--   * a gateway role granted EXECUTE on handle and handle_http (the grants 90_grants.sql suggests)
--     serves rounds, push included: both are SECURITY DEFINER, so the round writes the catalog
--     and the synced table as the extension owner;
--   * the same role can neither read nor write the catalog tables (sync_commits,
--     sync_push_results, the rows kept for the synced table: its changes, row scopes, compiled
--     registration and layout marker) nor the synced app table itself: 42501;
--   * it may not call the owner-only surface (ensure_schema, prune, rotate_log_epoch, hooks) nor
--     what it was not granted (push, pull, debug_encode): 42501;
--   * a role without the grant cannot serve a round.
-- Requests are built by the superuser with syncular.debug_encode (not granted to the gateway) and
-- handed over in a table the gateway may read.
-- Roles are cluster-wide: their names are unique to this run (the backend pid), so the test
-- neither trips over nor touches an operator's roles (e.g. the app_jobs 90_grants.sql suggests);
-- they are created inside the transaction and the closing ROLLBACK drops them.
SELECT 'syncular_tap_gateway_' || pg_backend_pid() AS gw, 'syncular_tap_outsider_' || pg_backend_pid() AS outsider,
       'syncular_tap_jobs_' || pg_backend_pid() AS jobs \gset
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS syncular;
SELECT plan(52);

-- ---------------------------------------------------------------------------------------------
-- set-up, as the superuser: roles, one synced table, a scope resolver, the request bytes
CREATE ROLE :"gw" NOLOGIN;
CREATE ROLE :"outsider" NOLOGIN;
CREATE ROLE :"jobs" NOLOGIN;
GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text) TO :"gw";
GRANT EXECUTE ON FUNCTION syncular.handle_http(bytea, text, text, text) TO :"gw";
GRANT EXECUTE ON FUNCTION syncular.push(text, text, text, jsonb) TO :"jobs";
GRANT EXECUTE ON FUNCTION syncular.pull(text, text, text, jsonb, jsonb) TO :"jobs";

SELECT is(syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true}]}]}') ->> 'action', 'created',
  'the superuser registers the schema (todos in public)');
CREATE FUNCTION public.tap_resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT '{"list_id": "*"}'::jsonb $$;
SELECT lives_ok($$SELECT syncular.set_scope_resolver('public.tap_resolver(text,text,text)')$$,
  'the superuser registers the scope resolver');

CREATE TABLE public.tap_req (k text PRIMARY KEY, b bytea NOT NULL);
CREATE TABLE public.tap_resp (k text PRIMARY KEY, status integer, body bytea NOT NULL);
GRANT SELECT ON public.tap_req TO :"gw", :"outsider";
GRANT INSERT ON public.tap_resp TO :"gw", :"outsider";
-- round 1: a bare pull (no logEpoch): the partition's epoch is acquired
INSERT INTO public.tap_req VALUES ('pull', syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [
  {"type": "REQ_HEADER", "clientId": "gw-client", "schemaVersion": 1},
  {"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1},
  {"type": "SUBSCRIPTION", "id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}, "cursor": -1}]}'));

-- ---------------------------------------------------------------------------------------------
-- a role without the grant
SET ROLE :"outsider";
SELECT throws_ok($$SELECT syncular.handle((SELECT b FROM public.tap_req WHERE k = 'pull'), 'p1', 'u1')$$,
  '42501', 'permission denied for function handle', 'a role without the grant cannot EXECUTE handle');
SELECT throws_ok($$SELECT * FROM syncular.handle_http((SELECT b FROM public.tap_req WHERE k = 'pull'), 'p1', 'u1')$$,
  '42501', 'permission denied for function handle_http', 'a role without the grant cannot EXECUTE handle_http');
RESET ROLE;

-- ---------------------------------------------------------------------------------------------
-- the gateway serves rounds
SET ROLE :"gw";
SELECT is(current_user::text, :'gw', 'running as the gateway role');
SELECT lives_ok($$INSERT INTO public.tap_resp (k, body)
                  SELECT 'pull', syncular.handle((SELECT b FROM public.tap_req WHERE k = 'pull'), 'p1', 'u1')$$,
  'gateway serves a pull round with handle (epoch acquisition)');
RESET ROLE;
SELECT results_eq(
  $$SELECT f ->> 'type', f ->> 'resetRequired', f ->> 'logEpoch' FROM public.tap_resp r,
           jsonb_array_elements(syncular.debug_render(r.body) -> 'frames') WITH ORDINALITY x(f, ord)
     WHERE r.k = 'pull' ORDER BY ord$$,
  $$SELECT 'RESP_HEADER', 'true', log_epoch FROM syncular.sync_partition_registry WHERE partition = 'p1'$$,
  'the bare pull is answered with the partition''s new epoch (resetRequired, nothing else)');
SELECT is((SELECT count(*)::int FROM syncular.sync_partition_registry WHERE partition = 'p1'), 1,
  'the gateway''s round registered partition p1 (written as the extension owner)');

-- round 2, with the epoch of round 1: one commit upserting todos t1 in list l1, and subscription s1
INSERT INTO public.tap_req
SELECT 'push', syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
  'frames', jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'gw-client', 'schemaVersion', 1, 'logEpoch', r.log_epoch),
    jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', 'gw-1', 'operations', jsonb_build_array(
      jsonb_build_object('table', 'todos', 'rowId', 't1', 'op', 'upsert',
        'payload', encode(syncular.encode_sparse_row('todos', '{"id": "t1", "list_id": "l1", "title": "from the gateway"}'), 'base64')))),
    jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', 0, 'maxSnapshotPages', 0, 'accept', 1),
    jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's1', 'table', 'todos', 'scopes', '{"list_id": ["l1"]}'::jsonb, 'cursor', -1))))
  FROM syncular.sync_partition_registry r WHERE r.partition = 'p1';
SET ROLE :"gw";
SELECT lives_ok($$INSERT INTO public.tap_resp
                  SELECT 'push', h.status, h.body
                    FROM syncular.handle_http((SELECT b FROM public.tap_req WHERE k = 'push'), 'p1', 'u1') h$$,
  'gateway serves a push + pull round with handle_http');
RESET ROLE;
SELECT is((SELECT status FROM public.tap_resp WHERE k = 'push'), 200, 'handle_http answered 200');
SELECT results_eq(
  $$SELECT f ->> 'type', coalesce(f ->> 'clientCommitId', f ->> 'id'), f ->> 'status' FROM public.tap_resp r,
           jsonb_array_elements(syncular.debug_render(r.body) -> 'frames') WITH ORDINALITY x(f, ord)
     WHERE r.k = 'push' AND f ->> 'type' IN ('PUSH_RESULT', 'SUB_START') ORDER BY ord$$,
  $$VALUES ('PUSH_RESULT', 'gw-1', 'applied'), ('SUB_START', 's1', 'active')$$,
  'the response: commit gw-1 applied, subscription s1 active');
SELECT results_eq(
  $$SELECT commit_seq, client_id, client_commit_id, actor_id FROM syncular.sync_commits WHERE partition = 'p1'$$,
  $$VALUES (1::bigint, 'gw-client' COLLATE "C", 'gw-1' COLLATE "C", 'u1')$$,
  'the commit is in sync_commits (written by the definer round)');
SELECT is((SELECT actor_id FROM syncular.sync_clients WHERE partition = 'p1' AND client_id = 'gw-client'), 'u1',
  'the round wrote the client record of gw-client (actor u1)');
SELECT results_eq($$SELECT id, list_id, title FROM public.todos$$,
  $$VALUES ('t1', 'l1', 'from the gateway')$$,
  'the row is in the synced table public.todos');

-- ---------------------------------------------------------------------------------------------
-- the gateway has no direct access to the catalog nor to the synced table (28 statements)
CREATE TEMP TABLE tap_targets (ord int, tbl text, col text);
INSERT INTO tap_targets VALUES
  (1, 'syncular.sync_commits', 'actor_id'),
  (2, 'syncular.sync_push_results', 'result'),
  (3, 'syncular.sync_changes', 'payload'),      -- the synced table's change rows
  (4, 'syncular.sync_row_scopes', 'value'),     -- the synced table's row scopes
  (5, 'syncular.sync_settings', 'compiled'),    -- the synced table's registration
  (6, 'syncular.sync_schema_meta', 'layouts'),  -- the synced table's stored layout
  (7, 'public.todos', 'title');                 -- the synced table itself
GRANT SELECT ON tap_targets TO :"gw";
SET ROLE :"gw";
SELECT throws_ok(format(q, t.tbl, t.col), '42501', 'permission denied for table ' || split_part(t.tbl, '.', 2),
                 format('gateway: %s on %s is refused', op, t.tbl))
  FROM tap_targets t,
       (VALUES (1, 'SELECT', 'SELECT * FROM %s'),
               (2, 'INSERT', 'INSERT INTO %s DEFAULT VALUES'),
               (3, 'UPDATE', 'UPDATE %s SET %2$I = %2$I'),
               (4, 'DELETE', 'DELETE FROM %s')) o(n, op, q)
 ORDER BY t.ord, o.n;

-- ... nor to the owner-only surface or what it was not granted
SELECT throws_ok(q, '42501', 'permission denied for function ' || d, 'gateway: ' || d || ' is refused')
  FROM (VALUES
    (1, 'ensure_schema', $$SELECT syncular.ensure_schema('{"version": 2, "tables": []}')$$),
    (2, 'prune', $$SELECT syncular.prune('p1', '{}')$$),
    (3, 'rotate_log_epoch', $$SELECT syncular.rotate_log_epoch('p1')$$),
    (4, 'set_scope_resolver', $$SELECT syncular.set_scope_resolver(NULL)$$),
    (5, 'push', $$SELECT syncular.push('p1', 'u1', 'gw-client', '[]')$$),
    (6, 'pull', $$SELECT syncular.pull('p1', 'u1', 'gw-client', '[]')$$),
    (7, 'debug_encode', $$SELECT syncular.debug_encode('{}')$$)) x(n, d, q)
 ORDER BY n;
RESET ROLE;
SELECT results_eq(
  $$SELECT (SELECT count(*)::int FROM syncular.sync_commits), (SELECT count(*)::int FROM public.todos),
           (SELECT log_epoch FROM syncular.sync_partition_registry WHERE partition = 'p1') =
           (SELECT syncular.debug_render(b) -> 'frames' -> 0 ->> 'logEpoch' FROM public.tap_req WHERE k = 'push')$$,
  $$VALUES (1, 1, true)$$,
  'the refused statements changed nothing (one commit, one row, the epoch not rotated)');

-- ---------------------------------------------------------------------------------------------
-- the backend-jobs grant 90_grants.sql suggests (EXECUTE on push and pull only)
SET ROLE :"jobs";
SELECT lives_ok($$SELECT syncular.push('p1', 'job', 'job-client', '[{"clientCommitId": "j-1", "operations":
  [{"table": "todos", "op": "upsert", "row": {"id": "t2", "list_id": "l1", "title": "from a job"}}]}]')$$,
  'app_jobs (EXECUTE on push only) pushes a commit');
SELECT lives_ok($$SELECT syncular.pull('p1', 'job', 'job-client', '[{"id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}}]')$$,
  'app_jobs (EXECUTE on pull only) pulls');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
