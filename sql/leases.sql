-- leases: auth leases (SPEC §7.3).  Off by default (no LEASE frame; an outage signal answers 401
-- sync.auth_lease_required).  With syncular.lease_ttl_ms: every round whose scopes resolved
-- issues or slides the client's lease (same leaseId) and answers LEASE right after RESP_HEADER,
-- wire 3 and wire 2; a resolver outage ("outage", or a raise with lease_on_resolver_error) is
-- served with the lease's scopes and does not slide it; missing / expired / other actor →
-- sync.auth_lease_required, revoked → sync.auth_lease_revoked; a revoked lease is never slid,
-- the next live-authorized round replaces it with a fresh id (or, with
-- syncular.lease_reissue_after_revoke off, nothing until clear_lease); revoke_leases revokes an
-- actor's leases.
\set VERBOSITY terse
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS leases;
CREATE DATABASE leases;
\c leases
SET client_min_messages = warning;
CREATE EXTENSION syncular;
RESET client_min_messages;

SELECT syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false},
    {"name": "title", "type": "string", "nullable": true}]}]}') ->> 'action' AS action;
CREATE TABLE public.grants (actor text, val text);
INSERT INTO public.grants VALUES ('u1', 'l1'), ('u2', 'l2');
CREATE TABLE public.mode (m text);
INSERT INTO public.mode VALUES ('ok');
CREATE FUNCTION public.resolve(actor text, part text, client text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF (SELECT m FROM public.mode) = 'outage' THEN RETURN '"outage"'; END IF;
  IF (SELECT m FROM public.mode) = 'raise' THEN RAISE EXCEPTION 'directory unreachable'; END IF;
  RETURN jsonb_build_object('list_id', coalesce((SELECT jsonb_agg(g.val) FROM public.grants g
                                                  WHERE g.actor = resolve.actor), '[]'));
END $$;
SELECT syncular.set_scope_resolver('public.resolve(text,text,text)') IS NOT NULL AS resolver_set;

-- a round of `client` as `actor` pulling list l1 (plus `extra` frames), wire `wire`; one line:
-- "<status> <frame types>" where LEASE shows whether its id is the stored one and its expiry
-- relative to the stored record; "<status> <code> <details>" for a JSON error body
CREATE FUNCTION pg_temp.round(actor text, client text, wire int DEFAULT 3, extra jsonb DEFAULT '[]')
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  epoch text := (SELECT log_epoch FROM syncular.sync_partition_registry WHERE partition = 'p1');
  req bytea;
  r record;
  j jsonb;
BEGIN
  req := syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', wire, 'msgKind', 'request',
    'frames', jsonb_build_array(jsonb_build_object('type', 'REQ_HEADER', 'clientId', client, 'schemaVersion', 1)
                                || CASE WHEN epoch IS NULL THEN '{}' ELSE jsonb_build_object('logEpoch', epoch) END)
              || extra
              || jsonb_build_array(
                   jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 10, 'limitSnapshotRows', 10,
                                      'maxSnapshotPages', 1, 'accept', 1),
                   jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's1', 'table', 'todos',
                                      'scopes', jsonb_build_object('list_id', jsonb_build_array('l1')), 'cursor', -1))));
  SELECT * INTO r FROM syncular.handle_http(req, 'p1', actor, 'application/vnd.syncular.sync.v2');
  IF r.content_type = 'application/json' THEN
    j := convert_from(r.body, 'UTF8')::jsonb;
    RETURN concat_ws(' ', r.status, j ->> 'code', j ->> 'details');
  END IF;
  j := syncular.debug_render(r.body);
  RETURN r.status || ' ' || (SELECT string_agg(CASE f ->> 'type'
      WHEN 'LEASE' THEN format('LEASE(stored=%s, expires=%s)',
        (SELECT l.lease_id = f ->> 'leaseId' FROM syncular.sync_leases l WHERE l.partition = 'p1' AND l.client_id = client),
        (SELECT CASE WHEN l.expires_at_ms = (f ->> 'expiresAtMs')::bigint AND l.expires_at_ms = l.issued_at_ms + 600000
                     THEN 'issued+ttl' ELSE 'other' END
           FROM syncular.sync_leases l WHERE l.partition = 'p1' AND l.client_id = client))
      WHEN 'SUB_START' THEN 'SUB_START(' || (f ->> 'status') || coalesce(' ' || (f ->> 'reasonCode'), '') || ')'
      WHEN 'PUSH_RESULT' THEN 'PUSH_RESULT(' || (f ->> 'status') || ')'
      ELSE f ->> 'type' END, ' ' ORDER BY o) FROM jsonb_array_elements(j -> 'frames') WITH ORDINALITY x(f, o));
END $$;
CREATE FUNCTION pg_temp.lease(client text) RETURNS text LANGUAGE sql AS $$
  SELECT format('%s actor=%s scopes=%s revoked=%s', left(lease_id, 6), actor_id, allowed_scopes,
                revoked_at_ms IS NOT NULL)
    FROM syncular.sync_leases WHERE partition = 'p1' AND client_id = client
$$;

-- first contact (no logEpoch yet): header only, no lease
SELECT pg_temp.round('u1', 'c1') AS handshake;

-- 1. leases off (default): no LEASE frame; an outage cannot be served
SELECT pg_temp.round('u1', 'c1') AS leases_off;
UPDATE public.mode SET m = 'outage';
SELECT pg_temp.round('u1', 'c1') AS outage_leases_off;
UPDATE public.mode SET m = 'ok';

-- 2. on: issued right after RESP_HEADER, then slid under the same id
SET syncular.lease_ttl_ms = 600000;
SELECT pg_temp.round('u1', 'c1') AS issued;
SELECT pg_temp.lease('c1') AS record;
SELECT lease_id AS first_id, expires_at_ms AS first_expiry FROM syncular.sync_leases WHERE client_id = 'c1' \gset
SELECT pg_sleep(0.01);
SELECT pg_temp.round('u1', 'c1') AS refreshed;
SELECT lease_id = :'first_id' AS same_id, expires_at_ms > :first_expiry AS slid
  FROM syncular.sync_leases WHERE client_id = 'c1';
SELECT pg_temp.round('u1', 'c1', 2) AS wire_2;
SELECT expires_at_ms AS expiry FROM syncular.sync_leases WHERE client_id = 'c1' \gset
-- the JSON producers serve rounds too (their client gets a lease; the LEASE frame is not theirs)
SELECT syncular.pull('p1', 'u1', 'job-1', '[{"id": "s", "table": "todos", "scopes": {"list_id": ["l1"]}}]')
         -> 0 ->> 'status' AS producer_pull, pg_temp.lease('job-1') AS producer_lease;

-- 3. outage: served with the lease's scopes (the grant as it was at issuance), not slid; a push
--    is authorized by them too
DELETE FROM public.grants WHERE actor = 'u1';
UPDATE public.mode SET m = 'outage';
SELECT pg_temp.round('u1', 'c1') AS outage_with_lease;
SELECT expires_at_ms = :expiry AS not_slid FROM syncular.sync_leases WHERE client_id = 'c1';
SELECT r ->> 'status' AS push_under_lease FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1',
  '[{"clientCommitId": "k1", "operations": [{"table": "todos", "row": {"id": "t1", "list_id": "l1", "title": "x"}}]}]')) r;
SELECT r ->> 'status' AS other_list_forbidden, r -> 'results' -> 0 ->> 'code' AS code
  FROM jsonb_array_elements(syncular.push('p1', 'u1', 'c1',
  '[{"clientCommitId": "k2", "operations": [{"table": "todos", "row": {"id": "t2", "list_id": "l2", "title": "x"}}]}]')) r;

-- 4. no valid lease: another client, a lease of another actor (client binding normally keeps
--    the actor of a client fixed), an expired lease
SELECT pg_temp.round('u1', 'c9') AS outage_no_lease;
UPDATE syncular.sync_leases SET actor_id = 'u2' WHERE client_id = 'c1';
SELECT pg_temp.round('u1', 'c1') AS outage_other_actor;
UPDATE syncular.sync_leases SET actor_id = 'u1' WHERE client_id = 'c1';
UPDATE syncular.sync_leases SET expires_at_ms = issued_at_ms WHERE client_id = 'c1';
SELECT pg_temp.round('u1', 'c1') AS outage_expired;

-- 5. revocation (§7.3.4): durable and refused on the outage path until the resolver authorizes
--    the client live again; that round issues a FRESH lease (new id, new expiry) and the revoked
--    id is never slid, accepted or issued again
UPDATE syncular.sync_leases SET expires_at_ms = :expiry WHERE client_id = 'c1';
SELECT syncular.revoke_lease('p1', :'first_id') AS revoked, syncular.revoke_lease('p1', :'first_id') AS again;
SELECT pg_temp.round('u1', 'c1') AS outage_revoked;
SELECT pg_temp.round('u1', 'c1') AS outage_revoked_again;
UPDATE public.mode SET m = 'ok';
INSERT INTO public.grants VALUES ('u1', 'l1');
SELECT pg_temp.round('u1', 'c1') AS live_round_reissues;
SELECT pg_temp.lease('c1') AS fresh_record;
SELECT lease_id AS second_id FROM syncular.sync_leases WHERE client_id = 'c1' \gset
SELECT :'second_id' <> :'first_id' AS new_id, revoked_at_ms IS NULL AS live
  FROM syncular.sync_leases WHERE client_id = 'c1';
-- the old id is gone for good: revoking or clearing it matches nothing; the fresh one serves an outage
SELECT syncular.revoke_lease('p1', :'first_id') AS revoke_old_id, syncular.clear_lease('p1', :'first_id') AS clear_old_id;
UPDATE public.mode SET m = 'outage';
SELECT pg_temp.round('u1', 'c1') AS outage_on_fresh_lease;
UPDATE public.mode SET m = 'ok';
SELECT pg_temp.round('u1', 'c1') AS fresh_one_slides;
SELECT lease_id = :'second_id' AS same_fresh_id FROM syncular.sync_leases WHERE client_id = 'c1';

-- 5b. the operator's block: with syncular.lease_reissue_after_revoke = off a revoked lease is
--     neither slid nor replaced by live rounds until clear_lease removes it
SET syncular.lease_reissue_after_revoke = off;
SELECT syncular.revoke_lease('p1', :'second_id') AS revoked;
SELECT pg_temp.round('u1', 'c1') AS live_round_blocked;
SELECT pg_temp.lease('c1') AS still_revoked, (SELECT lease_id = :'second_id' FROM syncular.sync_leases WHERE client_id = 'c1') AS same_id;
UPDATE public.mode SET m = 'outage';
SELECT pg_temp.round('u1', 'c1') AS outage_blocked;
UPDATE public.mode SET m = 'ok';
SELECT syncular.clear_lease('p1', :'second_id') AS cleared;
SELECT pg_temp.round('u1', 'c1') AS reissued_after_clear;
SELECT lease_id NOT IN (:'first_id', :'second_id') AS third_id FROM syncular.sync_leases WHERE client_id = 'c1';
RESET syncular.lease_reissue_after_revoke;

-- 6. every lease of an actor
SELECT pg_temp.round('u1', 'c2') AS second_client;
SELECT syncular.revoke_leases('p1', 'u1') AS revoked_of_u1, syncular.revoke_leases('p1', 'u2') AS revoked_of_u2;
SELECT client_id, revoked_at_ms IS NOT NULL AS revoked FROM syncular.sync_leases ORDER BY 1;

-- 7. a raising resolver: fails closed by default; an outage when the operator says so
SELECT syncular.clear_lease('p1', lease_id) FROM syncular.sync_leases WHERE client_id = 'c2';
SELECT pg_temp.round('u1', 'c2') AS c2_reissued;
UPDATE public.mode SET m = 'raise';
SET client_min_messages = error;
SELECT pg_temp.round('u1', 'c2') AS raise_fails_closed;
SET syncular.lease_on_resolver_error = on;
SELECT pg_temp.round('u1', 'c2') AS raise_served_by_lease;
SELECT pg_temp.round('u1', 'c1') AS raise_revoked_lease;
RESET client_min_messages;

\c :orig_db
SET client_min_messages = warning;
DROP DATABASE leases;
