-- push_errors: request-level failures of syncular.handle (raised: catalogue SQLSTATE + DETAIL
-- {"code","details"}), the header-only answers (schema floor, epoch reset) and
-- syncular.handle_http's HTTP answers for each of them.
\set testdb syncular_t_push_errors
\i sql/push_helpers.psql

SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
SELECT * FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc('a-1',
  pg_temp.up('todos', '{"id": "t1", "list_id": "l1", "title": "milk", "done": null, "n": null, "meta": null, "doc": null, "att": null}'))));

-- h(frames, client, actor, wire, epoch, sv): handle() a request on p1, as try() text
CREATE FUNCTION pg_temp.h(frames jsonb, client text DEFAULT 'A', actor text DEFAULT 'u1',
                          wire int DEFAULT 3, epoch text DEFAULT '=', sv int DEFAULT 1) RETURNS text
LANGUAGE sql AS $$
  SELECT pg_temp.try(format('SELECT string_agg(x, E''\n'') FROM pg_temp.show(''p1'', syncular.handle(%L::bytea, ''p1'', %L)) x',
                            pg_temp.req('p1', client, frames, wire, epoch, sv), actor))
$$;
-- http(bytes, actor, content_type): handle_http's row with the body as text (or as a rendering)
CREATE FUNCTION pg_temp.http(req bytea, actor text DEFAULT 'u1',
                             ct text DEFAULT 'application/vnd.syncular.sync.v2') RETURNS text
LANGUAGE sql AS $$
  SELECT format('%s %s %s', h.status, h.content_type,
                CASE WHEN h.content_type = 'application/json' THEN convert_from(h.body, 'UTF8')
                     ELSE (SELECT string_agg(x, ' | ') FROM pg_temp.show('p1', h.body) x) END)
    FROM syncular.handle_http(req, 'p1', actor, ct) h
$$;

\set ins '{"id": "t2", "list_id": "l1", "title": "x", "done": null, "n": null, "meta": null, "doc": null, "att": null}'

-- ---------------------------------------------------------------------------------------------
-- decode errors (sync.invalid_request / sync.empty_commit, 22023)
SELECT t, pg_temp.try(q) FROM (VALUES
  ('garbage',        $$SELECT syncular.handle('\x0102', 'p1', 'u1')$$),
  ('empty',          $$SELECT syncular.handle('\x', 'p1', 'u1')$$),
  -- REQ_HEADER{clientId "c", schemaVersion 1, no epoch} + PUSH_COMMIT{"x", 0 operations} + END
  ('empty commit',   $$SELECT syncular.handle(('\x53535032030001000' || '10a000000010000006301000000000209000000010000007800000000' || '0000000000')::bytea, 'p1', 'u1')$$),
  ('response kind',  $$SELECT syncular.handle(syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "response", "frames": [{"type": "RESP_HEADER", "logEpoch": "e", "resetRequired": false}]}'), 'p1', 'u1')$$),
  ('wire 1',         $$SELECT syncular.handle(syncular.debug_encode('{"magic": "SSP2", "wireVersion": 1, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "A", "schemaVersion": 1}, {"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]}'), 'p1', 'u1')$$),
  ('null request',   $$SELECT syncular.handle(NULL, 'p1', 'u1')$$),
  ('null actor',     $$SELECT syncular.handle('\x00', 'p1', NULL)$$),
  ('empty partition', $$SELECT syncular.handle('\x00', '', 'u1')$$)
) v(t, q);

-- ---------------------------------------------------------------------------------------------
-- plan order (§3.3): pushes without logEpoch -> sync.invalid_request, before anything else
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('a-2', pg_temp.up('todos', :'ins'))), epoch => NULL);
-- schema floor: required = latest = 1, nothing processed (the push is not applied), and it wins
-- over an epoch reset (resetRequired still computed)
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('a-2', pg_temp.up('todos', :'ins'))), sv => 2);
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('a-2', pg_temp.up('todos', :'ins'))), sv => 2, epoch => 'stale');
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')), sv => 2, epoch => NULL);
-- epoch reset: a different epoch -> RESP_HEADER resetRequired + the current epoch, nothing else
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('a-2', pg_temp.up('todos', :'ins')), pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')), epoch => 'stale');
SELECT count(*) AS t2_rows, (SELECT count(*) FROM syncular.push_results WHERE client_commit_id = 'a-2') AS results
  FROM public.todos WHERE id = 't2';
-- the floor and reset checks come before the client checks: a reserved id still gets the floor
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')), client => '["remote-command",1]', sv => 3);
-- reserved clientId prefix -> sync.invalid_client_id
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')), client => '["remote-command","x"]');
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')), client => '["remote-command"x');
-- client <-> actor binding: A is bound to u1
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')), actor => 'u2');
-- operation cap (GUC, counted over every commit) -> sync.too_many_operations, nothing applied
SET syncular.max_operations_per_request = 2;
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('a-3', pg_temp.up('todos', :'ins')),
                                   pg_temp.pc('a-4', pg_temp.del('todos', 'x'), pg_temp.del('todos', 'y'))));
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('a-3', pg_temp.up('todos', :'ins')), pg_temp.pc('a-4', pg_temp.del('todos', 'x'))));
RESET syncular.max_operations_per_request;
SHOW syncular.max_operations_per_request;
-- accept without bit 0 or 1 -> sync.invalid_request
SELECT pg_temp.h('[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 12}]');
-- subscription validation
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}'), pg_temp.sub('s', 'todos', '{"list_id": ["l2"]}')));
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'nope', '{"list_id": ["l1"]}')));
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"owner": ["l1"]}')));
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1", "*"]}')));
-- the resolver returned a variable no table declares -> sync.invalid_subscription
INSERT INTO public.grants VALUES ('u9', 'bogus', 'x');
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')), client => 'N', actor => 'u9');
-- the resolver raising fails closed: every subscription revoked, every write forbidden
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('k-1', pg_temp.up('todos', :'ins')),
                                   pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1)), client => 'K', actor => 'boom');
-- effective = requested ∩ allowed: l3 is dropped, a key with no allowed value revokes
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s1', 'todos', '{"list_id": ["l3", "l1", "l1"]}', 1),
                                   pg_temp.sub('s2', 'todos', '{"list_id": ["l3"]}', 1),
                                   pg_temp.sub('s3', 'todos', '{}', 1)));
-- no schema registered -> sync.schema_not_ready (55000)
BEGIN;
UPDATE syncular.sync_settings SET compiled = NULL;
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}')));
ROLLBACK;
-- the cache follows the settings row back
SELECT pg_temp.h(jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1)));

-- an error that is not in the catalogue (a trigger on the synced table) -> sync.internal_error
-- with a fixed message; the database text is not returned
CREATE FUNCTION public.no_boom() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.title = 'boom' THEN RAISE EXCEPTION 'secret database text'; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER no_boom BEFORE INSERT OR UPDATE ON public.todos FOR EACH ROW EXECUTE FUNCTION public.no_boom();
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('a-5', pg_temp.up('todos', '{"id": "t1", "title": "boom"}'))));
SELECT count(*) AS stored FROM syncular.push_results WHERE client_commit_id = 'a-5';

-- the RFC 0007 writer fence refuses the sync_commits insert: not an outcome of the push, so the
-- round fails with the fence's own error (SQLSTATE P0001, code sync.storage.writer_fence_rejected;
-- handle_http answers 500 sync.internal_error, see barrier_round) and nothing of the commit remains
INSERT INTO syncular.sync_writer_fence VALUES ('p1', 2);
SELECT pg_temp.h(jsonb_build_array(pg_temp.pc('a-9', pg_temp.up('todos', '{"id": "t1", "n": 9}'))));
SELECT count(*) AS a9_results FROM syncular.push_results WHERE client_commit_id = 'a-9';
DELETE FROM syncular.sync_writer_fence;

-- ---------------------------------------------------------------------------------------------
-- handle_http: the HTTP answer of each case
SELECT t, pg_temp.http(r, a, ct) FROM (VALUES
  ('ok',                pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1))), 'u1', 'application/vnd.syncular.sync.v2'),
  ('ok, parameters',    pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1))), 'u1', ' Application/VND.syncular.sync.v2 ; charset=binary'),
  ('wrong type',        pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1))), 'u1', 'application/json'),
  ('no type',           pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1))), 'u1', NULL),
  ('decode error',      '\x0102'::bytea, 'u1', 'application/vnd.syncular.sync.v2'),
  ('empty commit',      ('\x53535032030001000' || '10a000000010000006301000000000209000000010000007800000000' || '0000000000')::bytea, 'u1', 'application/vnd.syncular.sync.v2'),
  ('floor',             pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1)), 3, '=', 7), 'u1', 'application/vnd.syncular.sync.v2'),
  ('client binding',    pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1))), 'u2', 'application/vnd.syncular.sync.v2'),
  ('unknown table',     pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'nope', '{}', 1))), 'u1', 'application/vnd.syncular.sync.v2'),
  ('internal',          pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('a-6', pg_temp.up('todos', '{"id": "t1", "title": "boom"}')))), 'u1', 'application/vnd.syncular.sync.v2')
) v(t, r, a, ct);
SET syncular.max_operations_per_request = 1;
SELECT pg_temp.http(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('a-7', pg_temp.del('todos', 'x'), pg_temp.del('todos', 'y')))));
RESET syncular.max_operations_per_request;
BEGIN;
UPDATE syncular.sync_settings SET compiled = NULL;
SELECT pg_temp.http(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s', 'todos', '{"list_id": ["l1"]}', 1))));
ROLLBACK;
-- a failed round leaves nothing behind: the internal failure wrote no result, no client update
SELECT count(*) AS a6_results FROM syncular.push_results WHERE client_commit_id = 'a-6';
-- a successful handle_http round commits with the caller
SELECT pg_temp.http(pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('a-8', pg_temp.up('todos', '{"id": "t1", "n": 8}')))));
SELECT n FROM public.todos WHERE id = 't1';
-- privileges: handle and handle_http are SECURITY DEFINER (fixed search_path): a role with
-- EXECUTE only serves rounds without any right on the catalog; without EXECUTE it is refused
SET client_min_messages = warning;
DROP ROLE IF EXISTS syncular_t_gateway;
CREATE ROLE syncular_t_gateway;
GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text) TO syncular_t_gateway;
SELECT pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('g-1', pg_temp.up('todos', '{"id": "t1", "n": 10}')))) AS gw_req \gset
SET ROLE syncular_t_gateway;
SELECT syncular.handle(:'gw_req'::bytea, 'p1', 'u1') AS gw_resp \gset
SELECT pg_temp.try($$SELECT count(*) FROM syncular.sync_commits$$) AS catalog_read;
SELECT pg_temp.try(format('SELECT status FROM syncular.handle_http(%L::bytea, ''p1'', ''u1'')', :'gw_req')) AS http_without_grant;
RESET ROLE;
SELECT * FROM pg_temp.show('p1', :'gw_resp'::bytea);
SELECT n FROM public.todos WHERE id = 't1';
DROP OWNED BY syncular_t_gateway;
DROP ROLE syncular_t_gateway;

-- the catalogue errors keep their SQLSTATE when raised through handle (for SQL callers)
SELECT code, sqlstate, http_status FROM syncular.error_catalog()
 WHERE code IN ('sync.invalid_request', 'sync.empty_commit', 'sync.invalid_client_id', 'sync.invalid_subscription',
                'sync.unknown_table', 'sync.too_many_operations', 'sync.schema_not_ready', 'sync.internal_error')
 ORDER BY code;

\i sql/push_done.psql
